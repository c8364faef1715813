"""Load ``businesses/*.yaml`` into ``Business`` models, or say precisely what is wrong.

Each file goes through three steps, and a step runs only if the one before it
passed for that file:

1. safe YAML load (``yamlio.load_yaml``): syntax, duplicate keys, the line of
   every node; ``on``/``yes``/``no`` stay strings;
2. JSON Schema (``business.schema.json``, shipped in this package): keys,
   types, enums, required keys;
3. meaning checks (``meaning.meaning_errors``): what a schema cannot say, e.g. field
   keys are unique, regexes compile, checks name existing fields, ``api.kind``
   names a registered executor kind whose ``Options`` model accepts
   ``api.options`` (an option written directly under ``api`` is reported
   there, e.g. ``api.url``; one under ``api.options`` as ``api.options.url``).

Business ids are then checked across files. Every problem of every file is
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
from si_agent.config.yamlio import YamlDocument, format_path, load_yaml
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
    first_seen: dict[str, str] = {}
    for path in files:
        business, file_errors, id_line = _load_file(path, validator)
        if business is not None and business.id in first_seen:
            file_errors.append(ConfigError(
                str(path), id_line, "id",
                f"duplicate business id {business.id!r}; also declared in {first_seen[business.id]}",
            ))
        elif business is not None:
            first_seen[business.id] = str(path)
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

    problems = [error(where, msg) for where, msg in schema_errors(validator, doc.data)]
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
        return None, [ConfigError(file, None, "", f"not valid UTF-8: {exc.reason}")]
    except OSError as exc:
        return None, [ConfigError(file, None, "", f"cannot read the file: {exc.strerror}")]
    doc = load_yaml(text)
    if doc.problems:
        return None, [
            ConfigError(file, p.line, format_path(p.path), p.message) for p in doc.problems
        ]
    return doc, []


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
