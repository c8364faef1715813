"""The shipped JSON Schema and the pydantic models describe the same document."""

from __future__ import annotations

from typing import get_args

import jsonschema
import pytest

from si_agent.config.loader import load_schema
from si_agent.config.model import (
    FIELD_ONLY_KEYS,
    SLOT_ONLY_KEYS,
    Api,
    Ask,
    Business,
    Check,
    ConsultTexts,
    FieldDef,
    Ineligible,
    Option,
    Step,
    Theme,
)
from si_agent.validators import TYPES

MODELS = {
    "#": Business, "field": FieldDef, "slot": FieldDef, "option": Option, "ineligible": Ineligible, "check": Check,
    "step": Step, "api": Api, "ask": Ask, "theme": Theme, "consult": ConsultTexts,
}
# FieldDef reads fields and consultation slots; each definition leaves out the other's keys.
LEFT_OUT = {"field": SLOT_ONLY_KEYS, "slot": FIELD_ONLY_KEYS}
REQUIRED_TOO = {"field": {"prompt"}}  # a slot has none: its theme asks for it


@pytest.fixture(scope="module")
def schema():
    return load_schema()


def _definition(schema, name):
    return schema if name == "#" else schema["$defs"][name]


def _yaml_keys(model):
    return {
        (info.alias or name) for name, info in model.model_fields.items() if not info.exclude
    }


def test_schema_is_valid_draft_2020_12(schema):
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"


@pytest.mark.parametrize("name", list(MODELS))
def test_properties_and_required_keys_match_the_model(schema, name):
    definition, model = _definition(schema, name), MODELS[name]
    # api alone is open: its other keys are shorthand for api.options, which the
    # executor kind's own Options model checks at load.
    assert definition["additionalProperties"] is (name == "api")
    assert set(definition["properties"]) == _yaml_keys(model) - LEFT_OUT.get(name, set())
    required = {
        (info.alias or key) for key, info in model.model_fields.items()
        if info.is_required()
    } | REQUIRED_TOO.get(name, set())
    assert set(definition.get("required", [])) == required


@pytest.mark.parametrize("name", list(MODELS))
def test_every_property_is_described(schema, name):
    definition = _definition(schema, name)
    for key, prop in definition["properties"].items():
        target = schema["$defs"][prop["$ref"].rsplit("/", 1)[-1]] if "$ref" in prop else prop
        assert target.get("description"), f"{name}.{key} has no description"


def test_enums_match_the_model(schema):
    defs = schema["$defs"]
    # Field types are open (a registry of validators): the schema documents the built-ins.
    field_type = defs["field"]["properties"]["type"]
    assert field_type["pattern"] == "^[a-z][a-z0-9_]*$"
    assert all(t in field_type["description"] for t in TYPES)
    assert tuple(defs["check"]["properties"]["op"]["enum"]) == get_args(
        Check.model_fields["op"].annotation
    )
    assert defs["api"]["properties"]["kind"]["pattern"] == (
        Api.model_json_schema()["properties"]["kind"]["pattern"]
    )
    assert tuple(schema["properties"]["type"]["enum"]) == get_args(
        Business.model_fields["type"].annotation
    )


def test_validate_is_the_yaml_key_of_pattern(schema):
    assert "validate" in schema["$defs"]["field"]["properties"]
    assert "pattern" not in schema["$defs"]["field"]["properties"]
