"""Typed business definitions, built from YAML after it passed the JSON Schema.

The JSON Schema (``business.schema.json``) is the contract for staff; these
pydantic models are what the code reads. Both describe the same document.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator
from pydantic_core import PydanticCustomError

# A field type names a validator (``si_agent.validators``): the built-in ones,
# or any registered by code or an entry point; the loader checks the name.
FieldType = str
MASKED_TYPES: frozenset[str] = frozenset({"idcard", "phone", "bank_card"})
# What a consultation's slot is written with and a field is not, and the other way
# round (the JSON Schema's "slot" and "field" definitions; FieldDef reads both).
SLOT_ONLY_KEYS = frozenset({"aliases", "unit"})
FIELD_ONLY_KEYS = frozenset({"prompt", "required", "ineligible"})
CompareOp = Literal["==", "!=", "<", "<=", ">", ">="]
# How a date field reads a span such as "去年年底": its last day, its first day,
# or ask the citizen for the exact day (the date validator's default).
DateSpan = Literal["end", "start", "ask"]


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)


class Option(_Model):
    """One enum choice and the other ways citizens say it."""

    value: str
    aliases: tuple[str, ...] = ()


class Ineligible(_Model):
    """An answer that means the citizen does not qualify (本人主动辞职 for 离职原因):
    never stored; the reply explains the policy and offers to stop or call."""

    value: str
    aliases: tuple[str, ...]
    reply: str | None = None  # the policy said; else the field's help

    def said_in(self, text: str) -> bool:
        """Whether ``text`` says this answer (its value or an alias, case-insensitive)."""
        folded = unicodedata.normalize("NFKC", text).casefold()
        return any(unicodedata.normalize("NFKC", w).casefold() in folded
                   for w in (self.value, *self.aliases))


class Bucket(_Model):
    """One range of a ``bucket`` field: amounts below ``below`` (the last has none)."""

    value: str
    below: float | None = None


class FieldDef(_Model):
    """A value the business needs from the citizen (a consultation's slot, too)."""

    key: str
    label: str
    type: FieldType
    # A consultation's slots are asked by their theme's templates, not one by one.
    prompt: str = ""
    pattern: str | None = Field(default=None, alias="validate")
    error_msg: str | None = None
    options: tuple[Option, ...] = ()
    min: float | None = None
    max: float | None = None
    min_length: int | None = None
    max_length: int | None = None
    required: bool = True
    not_future: bool = False
    # Words that, placed before or after a value in a sentence, tie it to this
    # field (e.g. "转出"/"从" for from_city); used by the rule engine.
    cues: tuple[str, ...] = ()
    example: str | None = None
    # Why the value is needed, shown when a citizen hesitates to give it ("为什么要这个");
    # without it the assistant texts' why_default is used. Placeholders {business}, {label}.
    why: str | None = None
    # What the field's term means ("社平工资是啥？"). Placeholders {business}, {label}.
    help: str | None = None
    # Answers that mean the citizen does not qualify: never stored, the policy said.
    ineligible: tuple[Ineligible, ...] = ()
    # Date fields only; None leaves the validator's default ("ask").
    date_span: DateSpan | None = None
    # bucket fields: the ranges an amount falls in, in increasing order.
    buckets: tuple[Bucket, ...] = ()
    # Consultation slots: words that stand for a value ("没孩子" for 0), by value;
    # the unit shown after the value ("40岁"); the theme the slot belongs to.
    # (Written as a mapping, value -> phrases; kept as options, which hash.)
    aliases: tuple[Option, ...] = ()
    unit: str | None = None
    group: str | None = Field(default=None, exclude=True)  # set from the theme

    @field_validator("aliases", mode="before")
    @classmethod
    def _aliases_by_value(cls, data: Any) -> Any:
        if isinstance(data, Mapping):
            return tuple({"value": str(k), "aliases": v} for k, v in data.items())
        return data

    @property
    def masked(self) -> bool:
        return self.type in MASKED_TYPES

    def ineligible_in(self, text: str) -> Ineligible | None:
        """The answer of ``ineligible`` that ``text`` says, if any."""
        return next((i for i in self.ineligible if i.said_in(text)), None)

    def validator_options(self) -> dict:
        """Keyword options for ``si_agent.validators.check`` for this field."""
        opts: dict = {}
        if self.pattern is not None:
            opts["pattern"] = self.pattern
        if self.options:
            opts["options"] = [(o.value, o.aliases) for o in self.options]
        for name in ("min", "max", "min_length", "max_length"):
            value = getattr(self, name)
            if value is not None:
                opts[name] = value
        if self.not_future:
            opts["not_future"] = True
        if self.date_span is not None:
            opts["date_span"] = self.date_span
        if self.buckets:
            opts["buckets"] = [(b.value, b.below) for b in self.buckets]
        return opts


class Check(_Model):
    """A cross-field rule: ``left op right``, where both are field keys."""

    left: str
    op: CompareOp
    right: str
    message: str
    # The field asked again when the rule fails; defaults to ``left``.
    field: str | None = None

    @property
    def reask(self) -> str:
        return self.field or self.left


class Step(_Model):
    """One step of a step flow (e.g. an ID-card photo), run by a step handler."""

    id: str
    label: str
    prompt: str
    handler: str
    error_msg: str | None = None
    # The camera a phone opens: "environment" for a document, "user" for a selfie.
    capture: Literal["environment", "user"] = "environment"
    # Field keys this step may fill (e.g. name and id_number read from an ID card).
    produces: tuple[str, ...] = ()
    # An optional step is not asked for: the citizen may upload for it while the
    # fields are collected or at the confirmation, and the business goes on without it.
    optional: bool = False


class Api(_Model):
    """How a completed business is executed: by which executor kind, with which options.

    ``kind`` names an executor in ``si_agent.config.kinds``; ``options``
    are validated by that kind's ``Options`` model when businesses load. Any
    key under ``api`` other than ``kind``, ``options`` and ``result_template``
    is shorthand for the same key under ``options`` (``url: ...`` is
    ``options: {url: ...}``); writing one key both ways is an error.
    """

    kind: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    options: dict[str, Any] = {}
    result_template: str

    @model_validator(mode="before")
    @classmethod
    def _fold_shorthand(cls, data: Any) -> Any:
        if not isinstance(data, Mapping):
            return data
        own = ("kind", "options", "result_template")
        shorthand = {k: v for k, v in data.items() if k not in own}
        options = data.get("options", {})
        if not shorthand or not isinstance(options, Mapping):
            return data  # nothing to fold, or field validation reports the bad options
        twice = [k for k in shorthand if k in options]
        if twice:
            raise PydanticCustomError(
                "option_twice",
                "{keys} written both under api and under api.options; write each once",
                {"keys": ", ".join(repr(k) for k in twice)},
            )
        return {**{k: data[k] for k in own if k in data}, "options": {**shorthand, **options}}


class Ask(_Model):
    """How many pending fields one prompt asks for."""

    max_fields: int = 1


class Condition(_Model):
    """``slot op value`` over a consultation's slots; ``contains`` for multi-choice slots."""

    slot: str
    op: CompareOp | Literal["contains"]
    value: str | int | float


class Recommendation(_Model):
    """A recommendation line, given when every condition holds."""

    when: tuple[Condition, ...]
    text: str


class ConsultTexts(_Model):
    """The templates a consultation's replies are made of (no model writes them)."""

    opening: str
    received: str
    corrected: str
    skipped: str
    resumed: str
    closing: str
    recommendations: tuple[Recommendation, ...] = ()
    default_recommendation: str
    handoff: str | None = None  # said to "转人工" (else the assistant's hand-off text)


class Theme(_Model):
    """One ordered part of a consultation: its slots and the templates that ask and
    sum them up."""

    id: str
    label: str
    opening: str
    follow_up: str
    summary: str
    slots: tuple[FieldDef, ...]


class Business(_Model):
    """A service citizens can query, handle or consult about, declared in one YAML file.

    A consultation (``type: consult``) gathers a profile in ordered ``themes``
    and submits nothing; its slots are also its ``fields`` (each with ``group``
    set to its theme id), so everything that reads fields reads slots.
    """

    id: str
    name: str
    type: Literal["query", "handle", "consult"]
    description: str
    keywords: tuple[str, ...]
    fields: tuple[FieldDef, ...] = ()
    # ``fields: discover``: the fields are read from the web form (api.kind rpa) on
    # first use; ``field_overrides`` pins what staff decided, by the form's label.
    discover: bool = Field(default=False, exclude=True)  # from fields: discover
    field_overrides: dict[str, dict[str, Any]] = {}
    checks: tuple[Check, ...] = ()
    steps: tuple[Step, ...] = ()
    themes: tuple[Theme, ...] = ()
    consult: ConsultTexts | None = None
    api: Api | None = None  # every business but a consultation has one (the schema says so)
    require_confirm: bool = False
    confirm_text: str | None = None
    max_attempts: int = 3
    ask: Ask = Ask()
    # How a model extracts field values: one call per turn (default) or one
    # small call per pending field, in parallel.
    extraction: Literal["turn", "per_field"] | None = None
    source: str = Field(default="", exclude=True)

    @model_validator(mode="before")
    @classmethod
    def _discovered_fields(cls, data: Any) -> Any:
        if isinstance(data, Mapping) and data.get("fields") == "discover":
            return {**data, "fields": (), "discover": True}
        return data

    @model_validator(mode="before")
    @classmethod
    def _slots_as_fields(cls, data: Any) -> Any:
        if not (isinstance(data, Mapping) and data.get("type") == "consult"
                and isinstance(data.get("themes"), list) and "fields" not in data):
            return data
        fields = [{**slot, "group": theme.get("id")}
                  for theme in data["themes"] if isinstance(theme, Mapping)
                  for slot in theme.get("slots") or () if isinstance(slot, Mapping)]
        return {**data, "fields": fields}

    def field(self, key: str) -> FieldDef:
        for f in self.fields:
            if f.key == key:
                return f
        raise KeyError(key)

    @property
    def field_keys(self) -> tuple[str, ...]:
        return tuple(f.key for f in self.fields)

    @property
    def is_consult(self) -> bool:
        return self.type == "consult"
