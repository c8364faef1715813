"""The foreign-form suite's manifest (``forms.yaml``): forms nobody on the project tuned the
fillers on, each with the business a citizen service would write for it and what the
form's server must receive.

A form entry holds:

- ``id``, ``title``, ``lang`` (``zh`` or ``en``), ``source`` (the public form it is
  modelled on, or ``original``), ``tags`` (its styles), ``goal`` (the task in words);
- how it is drawn (``layout``, ``labels``, ``js``, ``required``; see ``render``) and its
  buttons (``submit``, ``next``, ``back``, ``reset``, ``save``);
- ``pages``: the controls per page (``name``, ``kind``, the page's ``label``, the
  business ``field`` it takes, ``options`` as ``value|label``), drawn by ``render`` or,
  with ``html``, a hand-written ``<form>`` from ``pages/``;
- ``consent``: a checkbox the business always ticks (the rpa ``fixed`` option);
- ``business``: the business's name and its ``fields`` (key, label as the service names
  it, type, options, and the ``gold`` value the service holds);
- ``expect``: per control name, what the server must receive (a string, a list for a
  multi-valued control, or ``{any: [...]}`` when several spellings are right);
- ``confirm`` and ``success``: the confirmation text (``{ref}`` the reference) and the
  pattern a business would configure to read it.

``load_forms`` reads and checks the file: unique ids, every field's controls exist, every
expected control is on a page, ``success`` finds the reference in ``confirm``.
``check`` compares what the server received with ``expect``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from si_agent.config.yamlio import load_yaml

MANIFEST = Path(__file__).with_name("forms.yaml")
PAGES = Path(__file__).with_name("pages")

Kind = Literal[
    "text",
    "email",
    "tel",
    "number",
    "date",
    "time",
    "month",
    "datetime-local",
    "textarea",
    "select",
    "multiselect",
    "radio",
    "checkboxes",
    "checkbox",
    "date-parts",
    "password",
]
LabelMode = Literal["for", "wrap", "text", "placeholder", "aria", "labelledby", "fieldset"]
OptionMode = Literal["for", "wrap", "bare"]
GROUPS = ("radio", "checkboxes")
DATE_PARTS = ("day", "month", "year")


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Choice(_Model):
    value: str
    label: str


class Control(_Model):
    """One control (or group of radios/checkboxes, or a day-month-year triple) of a page."""

    name: str
    kind: Kind
    label: str = ""  # what the page calls it (may be empty: a control with no name at all)
    field: str | None = None  # the business field it takes
    options: list[Choice] = []
    labels: LabelMode | None = None  # overrides the form's
    option_labels: OptionMode = "for"
    hint: str = ""
    placeholder: str = ""
    default: str | None = None  # pre-filled value / pre-selected option value
    required: bool | None = None  # overrides the form's
    empty_option: str | None = "__auto__"  # a select's first empty option text; None: none
    value: str = "on"  # a single checkbox's value

    @field_validator("options", mode="before")
    @classmethod
    def _pairs(cls, data: Any) -> Any:
        if isinstance(data, list):
            out = []
            for item in data:
                if isinstance(item, str):
                    value, _, label = item.partition("|")
                    out.append({"value": value, "label": label or value})
                else:
                    out.append(item)
            return out
        return data

    @property
    def names(self) -> list[str]:
        """The names the server receives for this control."""
        if self.kind == "date-parts":
            return [f"{self.name}-{part}" for part in DATE_PARTS]
        return [self.name]


class Page(_Model):
    heading: str = ""
    intro: str = ""
    controls: list[Control]
    # A hand-written <form> (a file under pages/, ``{action}`` where it posts) drawn
    # instead of the controls; ``controls`` still list what it holds.
    html: str = ""

    @property
    def markup(self) -> str:
        return (PAGES / self.html).read_text("utf-8") if self.html else ""


class Buttons(_Model):
    submit: str = "提交"
    submit_tag: Literal["button", "input", "input-novalue", "div"] = "button"
    next: str = "下一步"
    next_tag: Literal["button", "input", "link"] = "button"
    back: str = ""  # a back button on pages after the first
    reset: str = ""  # an <input type=reset> beside the submit
    save: str = ""  # a save-draft button (posts, stays on the page)
    cancel: str = ""  # a link back to the home page


class Consent(_Model):
    name: str
    label: str
    value: str = "on"


class BusinessOption(_Model):
    value: str
    aliases: list[str] = []


class BusinessField(_Model):
    key: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    label: str
    type: str
    options: list[BusinessOption] = []
    gold: str | list[str]

    @field_validator("options", mode="before")
    @classmethod
    def _strings(cls, data: Any) -> Any:
        if isinstance(data, list):
            return [{"value": o} if isinstance(o, str) else o for o in data]
        return data


class Business(_Model):
    name: str
    fields: list[BusinessField]


class Form(_Model):
    id: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    title: str
    lang: Literal["zh", "en"]
    source: str
    tags: list[str]
    goal: str
    layout: Literal["table", "bootstrap", "plain", "dl", "govuk", "grid"] = "plain"
    labels: LabelMode = "for"
    js: Literal["none", "load", "delay", "fetch"] = "none"
    required: bool = True
    novalidate: bool = True
    buttons: Buttons = Buttons()
    consent: Consent | None = None
    pages: list[Page]
    business: Business
    expect: dict[str, str | list[str] | dict[str, list[str]]]
    confirm: str = "申请已提交。受理编号：{ref}"
    ref: str = "SI{date}{serial:06d}"
    success: str | None = None  # None: the default (受理编号：SI + 14 digits)

    @model_validator(mode="after")
    def _consistent(self) -> Form:
        controls = {c.name: c for c in self.controls}
        keys = {f.key for f in self.business.fields}
        for c in controls.values():
            if c.field is not None and c.field not in keys:
                raise ValueError(f"control {c.name}: no business field {c.field!r}")
        for f in self.business.fields:
            if not any(c.field == f.key for c in controls.values()):
                raise ValueError(f"field {f.key}: no control takes it")
        names = {n for c in controls.values() for n in c.names}
        if self.consent is not None:
            names.add(self.consent.name)
            self.expect.setdefault(self.consent.name, self.consent.value)
        for name in self.expect:
            if name not in names:
                raise ValueError(f"expect.{name}: no such control")
        for c in controls.values():
            if c.field is not None:
                for n in c.names:
                    if n not in self.expect:
                        raise ValueError(f"control {n} takes {c.field} but has no expect")
        return self

    @property
    def controls(self) -> list[Control]:
        return [c for p in self.pages for c in p.controls]

    @property
    def kinds(self) -> list[str]:
        """The control kinds the form has (its consent as ``consent``)."""
        found = sorted({c.kind for c in self.controls})
        return found + (["consent"] if self.consent else [])

    def controls_of(self, key: str) -> list[Control]:
        return [c for c in self.controls if c.field == key]

    @property
    def gold(self) -> dict[str, str | list[str]]:
        return {f.key: f.gold for f in self.business.fields}


class _File(_Model):
    forms: list[Form]


def load_forms(path: Path = MANIFEST) -> list[Form]:
    """The forms of the manifest, checked (``ValueError`` naming the form and the problem)."""
    doc = load_yaml(path.read_text("utf-8"))
    if doc.problems:
        raise ValueError(
            f"{path}: " + "; ".join(f"line {p.line}: {p.message}" for p in doc.problems)
        )
    forms = _File.model_validate(doc.data).forms
    seen: set[str] = set()
    for form in forms:
        if form.id in seen:
            raise ValueError(f"{path}: duplicate form id {form.id!r}")
        seen.add(form.id)
        sample = confirmation_text(form, reference(form, 1))
        if not re.search(success_pattern(form), sample):
            raise ValueError(f"{path}: {form.id}: success does not match {sample!r}")
    return forms


DEFAULT_SUCCESS = r"受理编号[:：]\s*(?P<application_no>SI\d{14})"


def success_pattern(form: Form) -> str:
    return form.success or DEFAULT_SUCCESS


def reference(form: Form, serial: int) -> str:
    return form.ref.format(date="20261203", serial=serial)


def confirmation_text(form: Form, ref: str) -> str:
    return form.confirm.format(ref=ref)


# -- checking ------------------------------------------------------------------------------


def _fold(value: str) -> str:
    return value.strip()


def received_right(want: str | list[str] | dict[str, list[str]], got: list[str]) -> bool:
    """Whether the values posted for one control name (``got``) are what ``want`` says."""
    got = [g for g in (_fold(v) for v in got) if g != ""]
    if isinstance(want, list):
        return sorted(_fold(w) for w in want) == sorted(got)
    if isinstance(want, dict):
        return len(got) == 1 and got[0] in [_fold(w) for w in want["any"]]
    if _fold(want) == "":
        return not got
    return got == [_fold(want)]


class FieldResult(BaseModel):
    """How one gold value (a business field, or the consent) arrived at the server."""

    key: str
    kinds: list[str]
    right: bool  # every control of it received what it must
    empty: bool  # none of its controls received anything
    got: dict[str, list[str]]


def strays(form: Form, received: dict[str, list[str]] | None) -> list[str]:
    """Controls that take no value (expected empty, no field) but received one."""
    received = received or {}
    return [
        n
        for c in form.controls
        if c.field is None and not c.default
        for n in c.names
        if form.expect.get(n) == "" and any(v.strip() for v in received.get(n, []))
    ]


def check(form: Form, received: dict[str, list[str]] | None) -> list[FieldResult]:
    """Per business field (and the consent), whether the server received it right.
    ``received`` is what the final submission held by control name (None: no submission)."""
    received = received or {}
    out = []
    items: Iterable[tuple[str, list[str], list[str]]] = [
        (
            f.key,
            [n for c in form.controls_of(f.key) for n in c.names],
            [c.kind for c in form.controls_of(f.key)],
        )
        for f in form.business.fields
    ]
    if form.consent is not None:
        items = [*items, ("consent", [form.consent.name], ["consent"])]
    for key, names, kinds in items:
        got = {n: received.get(n, []) for n in names}
        right = all(received_right(form.expect[n], got[n]) for n in names)
        empty = all(not [v for v in got[n] if v.strip()] for n in names)
        out.append(FieldResult(key=key, kinds=kinds, right=right, empty=empty, got=got))
    return out
