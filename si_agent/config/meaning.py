"""Step 3 of loading a business (``si_agent.config.loader``): the meaning checks.

What a JSON Schema cannot say, e.g. field keys are unique, regexes compile,
checks name existing fields, templates name only what they can be given, and
``api.kind`` names a registered executor kind (``si_agent.config.kinds``) whose
``Options`` model accepts ``api.options`` (an option written directly under
``api`` is reported there, e.g. ``api.url``; one under ``api.options`` as
``api.options.url``). ``meaning_errors`` yields each problem as ``(path, message)``;
the loader locates it as ``file:line: path: message``.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator, Mapping
from typing import Any

import regex
from pydantic import ValidationError

from si_agent.config.backends import backend_errors, result_keys
from si_agent.config.kinds import executor_kinds, executor_options, option_errors
from si_agent.config.model import Business, FieldDef
from si_agent.config.templates import placeholders, template_errors
from si_agent.errors import DefinitionError, UnknownBackendError
from si_agent.validators import check, field_types
from si_agent.validators.text import slow_pattern

CONFIRM_PLACEHOLDERS: frozenset[str] = frozenset({"summary", "name"})
# A field's why/help text, and the assistant's default why text: the business
# name and the field's label.
FIELD_TEXT_PLACEHOLDERS: frozenset[str] = frozenset({"business", "label"})
# What the templating fills in any result template besides the values and the answer.
RESULT_BUILTINS: frozenset[str] = frozenset({"handoff"})
_NUMERIC = frozenset({"year", "integer", "number"})
_LENGTH_TYPES = frozenset({"text", "name"})
_DATED = frozenset({"date", "year"})
_ORDERED_OPS = frozenset({"<", "<=", ">", ">="})


def meaning_errors(b: Business, stem: str, raw: Mapping) -> Iterator[tuple[tuple, str]]:
    """What the schema cannot say; yields (path, message). ``raw`` is the YAML data.

    What the business's backend cannot serve (``backends``) is checked last, and
    only on a business with no other problem (a field key misspelt is reported
    once, not again as a key the backend misses)."""
    problems = list(_own_errors(b, stem, raw))
    yield from problems
    if not problems and b.api is not None:
        yield from backend_errors(b, raw["api"])


def _own_errors(b: Business, stem: str, raw: Mapping) -> Iterator[tuple[tuple, str]]:
    if b.id != stem:
        yield ("id",), f"business id {b.id!r} must equal the file name {stem!r}"
    if b.discover and (b.api is None or b.api.kind != "rpa"):
        yield ("fields",), "fields: discover needs api.kind: rpa (the fields are read from its form)"
    for label, override in b.field_overrides.items():
        try:  # what the pinned keys would make of a discovered field
            FieldDef.model_validate({"key": "x", "label": label, "type": "text", "prompt": "-",
                                     **override})
        except ValidationError as exc:
            problem = exc.errors(include_url=False)[0]
            where = ".".join(str(p) for p in problem["loc"])
            yield ("field_overrides", label, where), problem["msg"]
            continue
        if "type" in override and override["type"] not in field_types():
            yield ("field_overrides", label, "type"), (
                f"unknown field type {override['type']!r}; valid: {', '.join(sorted(field_types()))}")
    if b.is_consult:
        yield from _consult_errors(b, raw)
        return
    for key in ("themes", "consult"):
        if key in raw:
            yield (key,), f"{key} applies to consult businesses only (type: consult)"
    if not b.fields and not b.steps and not b.discover:
        yield (), "a business needs at least one entry in fields or steps"
    yield from _duplicates("fields", "key", [f.key for f in b.fields], "field key")
    yield from _duplicates("steps", "id", [s.id for s in b.steps], "step id")
    for i, f in enumerate(b.fields):
        yield from _field_errors(("fields", i), f)
    yield from _check_errors(b)
    yield from _step_errors(b)
    yield from _literal_errors(b)
    assert b.api is not None  # required by the schema for every type but consult
    yield from _api_errors(b, raw["api"])
    if b.type == "handle" and not b.require_confirm and not b.steps:
        yield ("type",), "a handle business needs require_confirm: true or steps"
    if b.confirm_text is not None:
        if not b.require_confirm:
            yield ("confirm_text",), "confirm_text is set but require_confirm is not true"
        yield from _template_errors(("confirm_text",), b.confirm_text, CONFIRM_PLACEHOLDERS)
    yield from _template_errors(("api", "result_template"), b.api.result_template,
                                result_placeholders(b))


def result_placeholders(b: Business) -> frozenset[str] | None:
    """What ``b``'s result template may name: its fields and steps, its backend's
    answer and the templating's own names; None (any plain name) when the answer's
    keys are not declared (an external backend) or the fields are discovered."""
    answer = result_keys(b)
    if answer is None or b.discover:
        return None
    return frozenset(b.field_keys) | {s.id for s in b.steps} | answer | RESULT_BUILTINS


def _literal_errors(b: Business) -> Iterator[tuple[tuple, str]]:
    """Texts shown as written (prompts, error messages, check messages) hold no
    ``{placeholder}``: the citizen would see it literally."""
    texts: list[tuple[tuple, str | None]] = []
    for i, f in enumerate(b.fields):
        texts += [(("fields", i, "prompt"), f.prompt), (("fields", i, "error_msg"), f.error_msg)]
    for i, step in enumerate(b.steps):
        texts += [(("steps", i, "prompt"), step.prompt),
                  (("steps", i, "error_msg"), step.error_msg)]
    texts += [(("checks", i, "message"), c.message) for i, c in enumerate(b.checks)]
    for at, text in texts:
        try:
            names = [n for n in placeholders(text or "") if n.isidentifier()]
        except ValueError:  # a lone brace is shown as written, as intended
            continue
        for name in names:
            yield at, (f"{{{name}}} would be shown to the citizen as written: prompts, "
                       f"error messages and check messages are not filled in; write the words "
                       f"themselves")


_CONSULT_ONLY_NOT = ("fields", "steps", "checks", "api", "require_confirm", "confirm_text")
_CONSULT_PLACEHOLDERS = {
    "received": frozenset({"items"}), "corrected": frozenset({"label", "old", "new"}),
    "skipped": frozenset({"labels"}), "closing": frozenset({"summary", "recommendation"}),
    "opening": frozenset(), "resumed": frozenset(), "handoff": frozenset({"handoff"}),
}


def _consult_errors(b: Business, raw: Mapping) -> Iterator[tuple[tuple, str]]:
    """A consultation: slots unique across themes, valid types, templates that name
    only what they can be given, recommendations over known slots."""
    for key in _CONSULT_ONLY_NOT:
        if key in raw:
            yield (key,), f"{key} does not apply to a consult business (its values are the slots of its themes)"
    yield from _duplicates("themes", "id", [t.id for t in b.themes], "theme id")
    first: dict[str, tuple] = {}
    for t, theme in enumerate(b.themes):
        keys = frozenset(s.key for s in theme.slots)
        for j, slot in enumerate(theme.slots):
            at = ("themes", t, "slots", j)
            if slot.key in first:
                yield at + ("key",), (f"duplicate slot key {slot.key!r}; first used at "
                                      f"themes[{first[slot.key][1]}].slots[{first[slot.key][3]}]")
            first.setdefault(slot.key, at)
            yield from _field_errors(at, slot)
            yield from _slot_errors(at, slot)
        for name, allowed in (("opening", frozenset()), ("follow_up", frozenset({"missing"})),
                              ("summary", keys)):
            yield from _template_errors(("themes", t, name), getattr(theme, name), allowed)
    assert b.consult is not None
    for name, allowed in _CONSULT_PLACEHOLDERS.items():
        text = getattr(b.consult, name)
        if text is not None:
            yield from _template_errors(("consult", name), text, allowed)
    types = {f.key: f.type for f in b.fields}
    for i, rec in enumerate(b.consult.recommendations):
        for j, cond in enumerate(rec.when):
            at = ("consult", "recommendations", i, "when", j)
            if cond.slot not in types:
                yield at + ("slot",), (f"unknown slot {cond.slot!r}; slots of this business: "
                                       f"{', '.join(types)}")
            elif (cond.op == "contains") != (types[cond.slot] == "multi_enum"):
                yield at + ("op",), "contains applies to multi_enum slots, and only contains does"


def _bucket_errors(at: tuple, f: FieldDef) -> Iterator[tuple[tuple, str]]:
    if f.type == "bucket":
        bounds = [b.below for b in f.buckets]
        if not f.buckets:
            yield at + ("buckets",), "a bucket field needs buckets"
        elif bounds[-1] is not None or None in bounds[:-1]:
            yield at + ("buckets",), "every bucket but the last needs below; the last has none"
        elif bounds[:-1] != sorted(bounds[:-1]):
            yield at + ("buckets",), "buckets must be in increasing order of below"
    elif f.buckets:
        yield at + ("buckets",), f"buckets apply to bucket fields, not {f.type}"


def _slot_errors(at: tuple, slot: FieldDef) -> Iterator[tuple[tuple, str]]:
    if slot.type in field_types():
        for option in slot.aliases:
            if not check(slot.type, option.value, **slot.validator_options()).ok:
                yield at + ("aliases", option.value), (
                    f"{option.value!r} is not a valid {slot.type} value for this slot")


def _duplicates(list_key: str, item_key: str, names: list[str], what: str) -> Iterator:
    first: dict[str, int] = {}
    for i, name in enumerate(names):
        if name in first:
            yield (list_key, i, item_key), f"duplicate {what} {name!r}; first used at {list_key}[{first[name]}]"
        else:
            first[name] = i


def _field_errors(at: tuple, f: Any) -> Iterator[tuple[tuple, str]]:
    types = field_types()
    if f.type not in types:
        yield at + ("type",), f"unknown field type {f.type!r}; valid types: {', '.join(types)}"
        return
    if f.pattern is not None:
        try:
            re.compile(f.pattern)
            regex.compile(f.pattern)  # what the text validator runs it on
        except (re.error, regex.error) as exc:
            yield at + ("validate",), f"invalid regular expression {f.pattern!r}: {exc}"
        else:
            if (probe := slow_pattern(f.pattern)) is not None:
                yield at + ("validate",), (
                    f"regular expression {f.pattern!r} takes too long on an answer like "
                    f"{probe[:12]!r}… ({len(probe)} characters): nested repetition such as "
                    "(a+)+ or (a|aa)+ backtracks without end; write it with one repetition "
                    "(正则表达式存在嵌套重复，市民输入稍长就会长时间卡住，请改写)")
    if f.type in ("enum", "multi_enum"):
        if not f.options:
            yield at + ("options",), f"an {f.type} field needs at least one option"
        yield from _alias_errors(at, f.options)
    elif f.options:
        yield at + ("options",), f"options are only allowed on enum and multi_enum fields, not {f.type}"
    yield from _bucket_errors(at, f)
    for low, high, types in (("min", "max", _NUMERIC), ("min_length", "max_length", _LENGTH_TYPES)):
        for name in (low, high):
            if getattr(f, name) is not None and f.type not in types:
                yield at + (name,), f"{name} applies to {'/'.join(sorted(types))} fields, not {f.type}"
        lo, hi = getattr(f, low), getattr(f, high)
        if lo is not None and hi is not None and lo > hi:
            yield at + (low,), f"{low} ({lo:g}) is greater than {high} ({hi:g})"
    if f.not_future and f.type not in _DATED:
        yield at + ("not_future",), f"not_future applies to date/year fields, not {f.type}"
    if f.date_span is not None and f.type != "date":
        yield at + ("date_span",), (f"date_span applies to date fields only; field {f.key!r} "
                                    f"is a {f.type} field")
    for name in ("why", "help"):
        text = getattr(f, name)
        if text is not None:
            yield from _template_errors(at + (name,), text, FIELD_TEXT_PLACEHOLDERS)
    yield from _ineligible_errors(at, f)


def _ineligible_errors(at: tuple, f: Any) -> Iterator[tuple[tuple, str]]:
    """Each ineligible answer has a policy to say, and none of its words is a real
    option's (a valid answer must never be refused)."""
    options = {_normal(w): o.value for o in f.options for w in (o.value, *o.aliases)}
    for i, item in enumerate(f.ineligible):
        where = at + ("ineligible", i)
        if item.reply is None and f.help is None:
            yield where, (f"ineligible answer {item.value!r} needs a reply, or the field "
                          f"a help text, to say the policy")
        if item.reply is not None:
            yield from _template_errors(where + ("reply",), item.reply, FIELD_TEXT_PLACEHOLDERS)
        for j, word in enumerate((item.value, *item.aliases)):
            if _normal(word) in options:
                yield (where + (("value",) if j == 0 else ("aliases", j - 1))), (
                    f"{word!r} names the option {options[_normal(word)]!r}; an ineligible "
                    f"answer cannot be a valid one")


def _normal(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold().strip()


def _alias_errors(at: tuple, options: tuple) -> Iterator[tuple[tuple, str]]:
    """Every value and alias must name exactly one option (NFKC, case-insensitive)."""
    owner: dict[str, int] = {}
    for i, option in enumerate(options):
        words = [(option.value, at + ("options", i, "value"))]
        words += [(a, at + ("options", i, "aliases", j)) for j, a in enumerate(option.aliases)]
        for word, where in words:
            key = _normal(word)
            if key not in owner:
                owner[key] = i
            elif owner[key] != i:
                other = options[owner[key]].value
                yield where, (f"{word!r} of option {option.value!r} also names option "
                              f"{other!r}; each value and alias must name one option")


def _check_errors(b: Business) -> Iterator[tuple[tuple, str]]:
    types = {f.key: f.type for f in b.fields}
    valid = ", ".join(types) or "(none)"
    for i, c in enumerate(b.checks):
        at = ("checks", i)
        names = [("left", c.left), ("right", c.right)] + ([("field", c.field)] if c.field else [])
        unknown = [(k, v) for k, v in names if v not in types]
        for key, name in unknown:
            yield at + (key,), f"unknown field {name!r}; fields of this business: {valid}"
        if unknown:
            continue
        left, right = types[c.left], types[c.right]
        if not {left, right} <= set(field_types()):
            continue  # the unknown type is reported on the field itself
        if c.left == c.right:
            yield at + ("right",), f"compares field {c.left!r} with itself"
        elif _family(left) != _family(right):
            yield at + ("right",), f"cannot compare {c.left} ({left}) with {c.right} ({right})"
        elif c.op in _ORDERED_OPS and _family(left) not in ("number", "date"):
            yield at + ("op",), f"{c.op!r} needs numbers, years or dates; {c.left} is {left}"


def _step_errors(b: Business) -> Iterator[tuple[tuple, str]]:
    keys = set(b.field_keys)
    valid = ", ".join(b.field_keys) or "(none)"
    for i, step in enumerate(b.steps):
        if step.id in keys:  # the executor gets both under one key, and so do backend errors
            yield ("steps", i, "id"), f"step id {step.id!r} is also a field key; rename one"
        for j, key in enumerate(step.produces):
            if key not in keys:
                yield ("steps", i, "produces", j), (
                    f"unknown field {key!r}; fields of this business: {valid}")


def _family(field_type: str) -> str:
    return "number" if field_type in _NUMERIC else field_type


def _api_errors(b: Business, raw_api: Mapping) -> Iterator[tuple[tuple, str]]:
    """The kind exists and its ``Options`` model accepts the options."""
    kind = b.api.kind
    try:
        options_model = executor_options(kind)
    except UnknownBackendError:
        yield ("api", "kind"), (f"unknown executor kind {kind!r}; "
                                f"valid kinds: {', '.join(executor_kinds())}")
        return
    except DefinitionError as exc:  # an entry point that cannot be loaded
        yield ("api", "kind"), str(exc)
        return
    written = raw_api.get("options")
    under_options = written if isinstance(written, Mapping) else {}
    for loc, message in option_errors(options_model, b.api.options)[1]:
        if not loc:
            at = ("api", "options") if "options" in raw_api else ("api",)
        elif loc[0] in under_options:
            at = ("api", "options", *loc)
        else:  # written as shorthand, directly under api
            at = ("api", *loc)
        yield at, message


def _template_errors(
    at: tuple, template: str, allowed: frozenset[str] | None
) -> Iterator[tuple[tuple, str]]:
    """Placeholders must be plain ``{name}``s (and among ``allowed`` if given)."""
    for message in template_errors(template, allowed):
        yield at, message
