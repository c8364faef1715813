"""Load ``businesses/*.yaml`` into ``Business`` models, or say precisely what is wrong.

Each file goes through three steps, and a step runs only if the one before it
passed for that file:

1. safe YAML load (``yamlio.load_yaml``): syntax, duplicate keys, the line of
   every node; ``on``/``yes``/``no`` stay strings; an item of a ``[...]`` list of
   words (keywords, options, aliases, cues) with a full-width comma in it
   (``[养老金补发，补发养老金]`` is one item to YAML) is an error;
2. JSON Schema (``business.schema.json``, shipped in this package): keys,
   types, enums, required keys; a list written in full-width brackets
   (``【a, b】``, a string to YAML) and a mapping written ``key:value`` with no
   space (a string too) get a hint;
3. meaning checks (``meaning.meaning_errors``): what a schema cannot say, e.g. field
   keys are unique, regexes compile, checks name existing fields, ``api.kind``
   names a registered executor kind whose ``Options`` model accepts
   ``api.options`` (an option written directly under ``api`` is reported
   there, e.g. ``api.url``; one under ``api.options`` as ``api.options.url``).

Business ids are then checked across files (the second file's ``id`` names the
first file and its line). Every problem of every file is
reported as a ``ConfigError`` located as ``file:line: path: message``.

Files whose name starts with ``_`` are not businesses and are skipped:
``_assistant.yaml`` holds the assistant's own texts (``si_agent.config.assistant``,
which reuses steps 1 and 2 from here); any other one is skipped with a warning.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterator
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
from pydantic import ValidationError

from si_agent.config.meaning import meaning_errors
from si_agent.config.model import Business
from si_agent.config.yamlio import (
    YamlDocument,
    format_path,
    load_yaml,
    looks_like_key_without_space,
    no_space_hint,
)
from si_agent.errors import ConfigError, ConfigErrors, ConfigWarning
from si_agent.validators import TYPES as BUILTIN_TYPES

log = logging.getLogger(__name__)

FIELD_TYPES: tuple[str, ...] = BUILTIN_TYPES  # plus any registered: validators.field_types()
ASSISTANT_FILE = "_assistant.yaml"
_JSON_TYPES = {
    "string": "a string", "object": "a mapping", "array": "a list",
    "integer": "an integer", "number": "a number", "boolean": "a boolean (true or false)",
}


def load_schema() -> dict[str, Any]:
    """The business JSON Schema shipped in this package."""
    text = resources.files("si_agent.config").joinpath("business.schema.json").read_text("utf-8")
    return json.loads(text)


def load_businesses(directory: str | Path) -> dict[str, Business]:
    """Load every ``*.yaml`` in ``directory`` not starting with ``_``, keyed by id, by file name.

    Raises ``ConfigErrors`` listing every problem of every file.
    """
    businesses, errors = check_directory(directory)
    if errors:
        raise ConfigErrors(errors)
    return businesses


def check_directory(directory: str | Path) -> tuple[dict[str, Business], list[ConfigError]]:
    """Load what can be loaded and list every problem (what ``si-agent validate`` prints).

    The returned businesses are those whose file has no problem; when two files
    declare the same id, the first by file name is kept.
    """
    directory = Path(directory)
    if not directory.is_dir():
        return {}, [ConfigError(str(directory), None, "", "not a directory")]
    files = []
    for path in sorted(directory.glob("*.yaml"), key=lambda p: p.name):
        if not path.name.startswith("_"):
            files.append(path)
        elif path.name != ASSISTANT_FILE:
            log.warning("%s: skipped; files starting with _ are not businesses "
                        "(the assistant texts are %s)", path, ASSISTANT_FILE)
    errors = [
        ConfigError(str(p), None, "", "business files must end in .yaml; this file is ignored")
        for p in sorted(directory.glob("*.yml"), key=lambda p: p.name)
        if not p.name.startswith("_")  # _assistant.yml is reported by the assistant loader
    ]
    if not files:
        errors.append(ConfigError(str(directory), None, "", "no business files (*.yaml) found"))
        return {}, errors

    validator = jsonschema.Draft202012Validator(load_schema())
    businesses: dict[str, Business] = {}
    first_seen: dict[str, str] = {}  # id -> "file:line" of its first declaration
    for path in files:
        business, file_errors, id_line = _load_file(path, validator)
        if business is not None and business.id in first_seen:
            file_errors.append(ConfigError(
                str(path), id_line, "id",
                f"duplicate business id {business.id!r}; also declared in "
                f"{first_seen[business.id]}; give each business its own id, equal to its "
                f"file name (业务 id 重复：每个业务的 id 必须不同，并与文件名一致)",
            ))
        elif business is not None:
            first_seen[business.id] = f"{path}:{id_line}" if id_line else str(path)
        errors.extend(file_errors)
        if business is not None and not file_errors:
            businesses[business.id] = business
    return businesses, errors


def _load_file(
    path: Path, validator: jsonschema.Validator
) -> tuple[Business | None, list[ConfigError], int | None]:
    """Run the three steps on one file; the Business is None if the schema failed."""
    file = str(path)
    doc, read_errors = read_document(path)
    if doc is None:
        return None, read_errors, None

    def error(where: tuple[str | int, ...], message: str) -> ConfigError:
        return ConfigError(file, doc.line_of(where), format_path(where), message)

    problems = [error(where, msg) for where, msg in list_comma_errors(doc)]
    problems += [error(where, msg) for where, msg in schema_errors(validator, doc.data)]
    if problems:
        return None, sorted(problems, key=_line_key), None
    try:
        business = Business.model_validate({**doc.data, "source": file})
    except ValidationError as exc:  # the schema and the model disagree: a bug, still located
        return None, [
            error(tuple(e["loc"]), e["msg"]) for e in exc.errors(include_url=False)
        ], None

    errors = [error(where, msg) for where, msg in meaning_errors(business, path.stem, doc.data)]
    return business, sorted(errors, key=_line_key), doc.line_of(("id",))


def read_document(path: Path) -> tuple[YamlDocument | None, list[ConfigError]]:
    """Step 1 for one file: its YAML document, or None and the located problems."""
    file = str(path)
    try:
        text = path.read_text("utf-8-sig")
    except UnicodeDecodeError as exc:
        return None, [_not_utf8(file, exc)]
    except OSError as exc:
        return None, [ConfigError(file, None, "", f"cannot read the file: {exc.strerror}")]
    doc = load_yaml(text)
    if doc.problems:
        return None, [
            ConfigError(file, p.line, format_path(p.path), p.message) for p in doc.problems
        ]
    return doc, []


def _not_utf8(file: str, exc: UnicodeDecodeError) -> ConfigError:
    """The file is not UTF-8: where the first bad byte is, and how to save it right."""
    raw = exc.object if isinstance(exc.object, bytes) else b""
    line = raw[: exc.start].count(b"\n") + 1
    try:
        raw.decode("gb18030")
        saved_as = "; it looks saved as GBK (GB2312/GB18030), as Windows Notepad and Excel do"
    except UnicodeDecodeError:
        saved_as = ""
    return ConfigError(file, line, "", (
        f"not valid UTF-8: {exc.reason} at byte {exc.start}{saved_as}; save the file as "
        "UTF-8 (提示：文件不是 UTF-8 编码，请以UTF-8编码保存，例如在记事本“另存为”里把编码选为 UTF-8)"))


# Lists of words, where "[养老金补发，补发养老金]" is one item to YAML: the items of these
# keys (keywords, field options and cues, aliases of an option or of a slot's value).
WORD_LISTS: frozenset[str] = frozenset({"keywords", "options", "aliases", "cues"})
_FULL_WIDTH_COMMAS = "，、"


def list_comma_errors(doc: YamlDocument) -> Iterator[tuple[tuple, str]]:
    """Unquoted items of ``[...]`` lists of words holding a full-width comma or 、:
    the staff meant two items (quoted, ``["甲，乙"]``, the comma is kept as written)."""
    for where, value in doc.flow_items.items():
        comma = next((c for c in _FULL_WIDTH_COMMAS if c in value), None)
        if comma is None or not WORD_LISTS.intersection(p for p in where[-3:-1] if isinstance(p, str)):
            continue
        items = [w.strip() for w in re.split(f"[{_FULL_WIDTH_COMMAS}]", value) if w.strip()]
        yield where, (
            f"{value!r} is one item: a full-width {comma!r} does not separate the items of a "
            f"[...] list; write [{', '.join(items)}] with ASCII commas, or one item per line "
            f"(- {items[0] if items else value}); put the item in quotes if the {comma!r} is part "
            f"of it (提示：方括号里的中文“{comma}”不能分隔各项，整段会被当成一项；请改用英文半角逗号"
            "“,”，或每行写一项“- …”)")


def located(business: Business, where: tuple[str | int, ...], message: str) -> ConfigWarning:
    """A warning about ``business`` at ``where`` in its file (the line read again)."""
    doc, _ = read_document(Path(business.source)) if business.source else (None, [])
    line = doc.line_of(where) if doc is not None else None
    return ConfigWarning(business.source or business.id, line, format_path(where), message)


def _line_key(error: ConfigError) -> int:
    return error.line or 0


# --- step 2: JSON Schema, with messages a business author can act on --------------


def schema_errors(validator: jsonschema.Validator, data: Any) -> Iterator[tuple[tuple, str]]:
    """Step 2: each schema violation as (path, message a business author can act on)."""
    for err in validator.iter_errors(data):
        where = tuple(err.absolute_path)
        if err.validator == "additionalProperties":
            allowed = sorted(err.schema.get("properties", {}))
            for key in err.instance:
                if key not in allowed:
                    yield where + (key,), f"unknown key {key!r}; valid keys: {', '.join(allowed)}"
        else:
            yield where, _schema_message(err)


def _schema_message(err: jsonschema.ValidationError) -> str:
    kind, expected, value = err.validator, err.validator_value, err.instance
    if kind == "required":
        missing = re.search(r"'(.+?)' is a required property", err.message)
        return f"missing required key {missing.group(1) if missing else err.message!r}"
    if kind == "type":
        wanted = _JSON_TYPES.get(expected, expected)
        message = f"expected {wanted}, got {_describe(value)}"
        if expected == "string" and isinstance(value, (bool, int, float)):
            message += ' (put it in quotes, e.g. "...")'
        elif isinstance(value, str):
            message += _string_hint(expected, value)
        return message
    if kind == "enum":
        choices = [str(c) for c in expected]
        return f"{value!r} is not allowed; valid values: {', '.join(choices)}"
    if kind == "minLength" and expected == 1:
        return "must not be empty"
    if kind == "minItems" and expected == 1:
        return "must list at least one item"
    if kind == "pattern":
        return (f"{value!r} is not a valid identifier; use lower-case letters, digits "
                f"and underscores, starting with a letter")
    if kind in ("minimum", "exclusiveMinimum"):
        sign = ">=" if kind == "minimum" else ">"
        return f"must be {sign} {expected}, got {value!r}"
    return err.message


_FULL_WIDTH_BRACKETS = {"【": "】", "［": "］", "〔": "〕"}


def _string_hint(expected: Any, value: str) -> str:
    """A hint when a string stands where a list or a mapping was meant: full-width
    brackets around a list, ``key:value`` with no space after the colon."""
    text = value.strip()
    close = _FULL_WIDTH_BRACKETS.get(text[:1])
    if expected == "array" and close is not None:
        items = [w.strip() for w in re.split("[,，、]", text[1:].rstrip("]］】〕")) if w.strip()]
        return (f"; hint: {text[0]} {close} are full-width brackets, so YAML reads this as one "
                f"piece of text; write a list in ASCII brackets: [{', '.join(items)}] "
                f"(提示：列表要用英文半角方括号“[ ]”，不能用中文的“{text[0]}{close}”)")
    if expected == "array" and text.startswith("-") and not text.startswith("- "):
        first = text[1:].split(" - ", 1)[0].strip()
        return (f"; hint: a list item needs a space after its '-': '- {first}' "
                f"(提示：列表的每一项要写成“- ”加内容，短横线后面要有一个空格，例如“- {first}”)")
    if expected == "array":
        items = [w.strip() for w in re.split("[,，、]", text) if w.strip()] or [text]
        return (f"; hint: write a list in brackets, [{', '.join(items)}], or one item per "
                f"line (- {items[0]}) (提示：这里要写成列表：用英文方括号“[ ]”括起来，或每行写一项“- …”)")
    key_value = looks_like_key_without_space(text)
    if expected == "object" and key_value is not None:
        return f"; {no_space_hint(*key_value)}"
    return ""


def _describe(value: Any) -> str:
    if value is None:
        return "nothing (the value is empty)"
    if isinstance(value, bool):
        return f"boolean {str(value).lower()}"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    kind = {str: "string", int: "integer", float: "number"}.get(type(value), type(value).__name__)
    return f"{kind} {value!r}"
