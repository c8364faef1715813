"""Reading a model's tool-call arguments: parse, repair known slips, validate.

The arguments are JSON text written by the model. They are parsed into an
object, a few slips seen in practice are repaired, and the result is validated
against the JSON Schema of the tool that was offered (``tool["function"]
["parameters"]``). Anything that still does not fit raises ``ArgumentsRejected``
with a short reason that names paths and keys, never the values (they may be
personal data).

The repairs, each for a slip models really make:

- ``match_business``: the business's name instead of its id ("社保卡申领").
- ``provide_field``: the values not wrapped in ``{"values": ...}``; invented
  keys, empty strings and nulls beside real values (dropped, the real values
  kept; with no real value left the call is validated as written).
- ``answer_question``: an unknown ``suggested_business_id`` becomes null.
- any tool: a number where the schema wants a string becomes that string.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError as SchemaError
from jsonschema.exceptions import best_match
from jsonschema.protocols import Validator
from jsonschema.validators import validator_for
from pydantic import TypeAdapter
from pydantic import ValidationError as ParseError

from si_agent.core import actions as T
from si_agent.errors import ArgumentsRejected

_OBJECT = TypeAdapter(dict[str, Any])


def read_arguments(
    name: str, text: str, schema: Mapping[str, Any], business_ids: Mapping[str, str]
) -> dict[str, Any]:
    """The arguments of a call to ``name``, repaired and valid against ``schema``.

    ``business_ids`` maps business names to ids (for the name-for-id slip).
    """
    try:
        args = _OBJECT.validate_json(text or "{}")
    except ParseError:
        raise ArgumentsRejected("malformed arguments") from None
    args = repair(name, args, schema, business_ids)
    error = best_match(validator(schema).iter_errors(args))
    if error is not None:
        raise ArgumentsRejected(describe(error))
    return args


def validator(schema: Mapping[str, Any]) -> Validator:
    """A validator for ``schema``, built (and the schema checked) once per distinct schema."""
    return _validator(json.dumps(schema, sort_keys=True, ensure_ascii=False))


@lru_cache(maxsize=256)
def _validator(schema_json: str) -> Validator:
    schema = json.loads(schema_json)  # our own tool schema, not model output
    cls = validator_for(schema, default=Draft202012Validator)
    cls.check_schema(schema)
    return cls(schema)


def describe(error: SchemaError) -> str:
    """Where and how ``error`` fails, without the offending value."""
    where = "/".join(str(p) for p in error.absolute_path) or "arguments"
    instance = error.instance
    if error.validator == "additionalProperties" and isinstance(instance, dict):
        known = error.schema.get("properties", {})
        extra = sorted(k for k in instance if k not in known)
        return f"{where}: unexpected {', '.join(extra)}"
    if error.validator == "required" and isinstance(instance, dict):
        missing = [k for k in error.validator_value if k not in instance]
        return f"{where}: missing {', '.join(missing)}"
    if error.validator == "type":
        return f"{where}: not of type {error.validator_value}"
    if error.validator == "enum":
        return f"{where}: not one of the allowed values"
    return f"{where}: fails {error.validator}"


# -- repairs -----------------------------------------------------------------


def repair(
    name: str, args: dict[str, Any], schema: Mapping[str, Any], business_ids: Mapping[str, str]
) -> dict[str, Any]:
    """``args`` with the known slips fixed (see the module docstring); a new dict."""
    args = dict(args)
    if name == T.MATCH_BUSINESS:
        bid = args.get("business_id")
        if isinstance(bid, str) and bid in business_ids:
            args["business_id"] = business_ids[bid]
    elif name == T.PROVIDE_FIELD:
        args = _wrapped_values(args, schema)
    elif name == T.ANSWER_QUESTION:
        allowed = _property(schema, "suggested_business_id").get("enum")
        if allowed is not None and args.get("suggested_business_id") not in allowed:
            args["suggested_business_id"] = None
    return _numbers_as_strings(args, schema)


def _wrapped_values(args: dict[str, Any], schema: Mapping[str, Any]) -> dict[str, Any]:
    if args and "values" not in args:
        args = {"values": args}
    values = args["values"]
    if not isinstance(values, dict):
        return args
    known = _property(schema, "values").get("properties", {})
    real = {k: v for k, v in values.items() if k in known and v not in ("", None)}
    return {**args, "values": real} if real else args


def _numbers_as_strings(value: Any, schema: Mapping[str, Any]) -> Any:
    """Numbers where ``schema`` wants a string (and no number), as strings; recursively."""
    if isinstance(value, dict):
        props = schema.get("properties", {})
        return {k: _numbers_as_strings(v, props[k]) if k in props else v
                for k, v in value.items()}
    types = schema.get("type")
    types = {types} if isinstance(types, str) else set(types or ())
    wants_string = "string" in types and not types & {"number", "integer"}
    if wants_string and isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    return value


def _property(schema: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    return schema.get("properties", {}).get(key, {})
