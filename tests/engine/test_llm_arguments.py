"""Model arguments are validated against the offered tool's JSON Schema.

Calls that do not fit are dropped and the reason recorded; the slips models
really make are repaired first. Engine tests go through the controller, the
real openai client and the fake server; the last ones check the schema reader
on its own.
"""

from __future__ import annotations

import copy

import jsonschema
import pytest

from si_agent.core import actions as T
from si_agent.engine.arguments import ArgumentsRejected, read_arguments, validator
from si_agent.engine.llm import LLMEngine
from si_agent.session.model import FieldState

from .conftest import make


@pytest.fixture
def ctl(catalog, settings):
    return make(catalog, settings, LLMEngine(catalog, settings))


def calls(*entries: tuple[str, object]) -> dict:
    """A scripted answer with these (name, arguments) tool calls."""
    return {"tool_calls": [{"name": n, "arguments": a} for n, a in entries]}


def start(ctl, fake, business_id: str, user: str = "u"):
    fake.push(calls(("match_business", {"business_id": business_id})))
    return ctl.handle(user, "办业务")


def last_record(ctl, user: str = "u"):
    return ctl.store.load(user).memory[-1]


def field(ctl, key: str, user: str = "u") -> FieldState:
    """The stored (unmasked) state of one field."""
    return ctl.store.load(user).fields.get(key, FieldState())


# -- dropped, with the reason recorded ---------------------------------------------------


def test_malformed_and_non_object_arguments_are_dropped(ctl, fake):
    start(ctl, fake, "social_transfer")
    fake.push(calls(("provide_field", "{not json"), ("modify_info", "[1, 2]")))
    turn = ctl.handle("u", "我身份证320102198809150628")
    assert turn.state == "collecting" and field(ctl, "id_number").status == "pending"
    record = last_record(ctl)
    assert record.calls == []
    assert record.reason == ("dropped provide_field: malformed arguments; "
                             "dropped modify_info: malformed arguments")


def test_unknown_and_not_offered_tools_are_dropped(ctl, fake):
    start(ctl, fake, "unemployment_benefit")
    fake.push(calls(("delete_everything", {}), ("confirm_submit", {}),
                    ("provide_field", {"values": {"name": "陈静"}})))
    turn = ctl.handle("u", "我叫陈静，直接提交吧")
    assert turn.state == "collecting" and field(ctl, "name").value == "陈静"
    record = last_record(ctl)
    assert [c.name for c in record.calls] == ["provide_field"]
    assert record.reason == ("dropped 'delete_everything': not offered; "
                             "dropped 'confirm_submit': not offered")


def test_a_business_id_outside_the_enum_is_dropped(ctl, fake):
    fake.push(calls(("match_business", {"business_id": "social_card_loss"})))
    turn = ctl.handle("u", "社保卡丢了")
    assert turn.state == "idle" and turn.business is None
    assert last_record(ctl).reason == (
        "dropped match_business: business_id: not one of the allowed values")


def test_an_extra_property_is_dropped(ctl, fake):
    fake.push(calls(("match_business", {"business_id": "card_loss", "confidence": 0.9})))
    turn = ctl.handle("u", "社保卡丢了")
    assert turn.state == "idle"
    assert last_record(ctl).reason == "dropped match_business: arguments: unexpected confidence"


def test_missing_required_and_wrong_types_are_dropped(ctl, fake):
    start(ctl, fake, "phone_change")
    fake.push(calls(("modify_info", {"value": "13800138000"}),
                    ("modify_info", {"field_key": "new_phone", "value": ["138"]}),
                    ("modify_info", {"field_key": "hometown"})))
    ctl.handle("u", "改一下")
    assert last_record(ctl).reason == (
        "dropped modify_info: arguments: missing field_key; "
        "dropped modify_info: value: not of type ['string', 'null']; "
        "dropped modify_info: field_key: not one of the allowed values")


def test_only_invented_field_keys_drop_the_call(ctl, fake):
    start(ctl, fake, "social_transfer")
    fake.push(calls(("provide_field", {"values": {"hometown": "南京"}})))
    ctl.handle("u", "我老家是南京的")
    assert field(ctl, "from_city").status == "pending"
    assert last_record(ctl).reason == "dropped provide_field: values: unexpected hometown"


def test_reasons_never_carry_the_values(ctl, fake):
    start(ctl, fake, "phone_change")
    fake.push(calls(("provide_field", {"values": {"new_phone": ["<PHONE_1>"], "name": "王芳"}})))
    ctl.handle("u", "王芳，新号13912345678")
    reason = last_record(ctl).reason
    assert reason == "dropped provide_field: values/new_phone: not of type string"
    assert "王芳" not in reason and "139" not in reason and "PHONE" not in reason


# -- the slips that are repaired ---------------------------------------------------------


def test_a_business_name_for_its_id(ctl, fake):
    fake.push(calls(("match_business", {"business_id": "社保卡申领"})))
    turn = ctl.handle("u", "想给自己弄张新的社保卡")
    assert turn.business.id == "card_apply" and turn.state == "collecting"
    assert last_record(ctl).calls[0].arguments == {"business_id": "card_apply"}


def test_values_not_wrapped(ctl, fake):
    start(ctl, fake, "card_apply")
    fake.push(calls(("provide_field", {"name": "张伟", "id_number": "<ID_1>"})))
    ctl.handle("u", "他叫张伟，身份证330122196303150178")
    assert field(ctl, "name").value == "张伟"
    assert field(ctl, "id_number").value == "330122196303150178"  # restored after validation


def test_numbers_where_strings_are_wanted(ctl, fake):
    start(ctl, fake, "pension_estimate")
    fake.push(calls(("provide_field", {"values": {"retire_age": 60, "avg_wage": 8000.5}})))
    ctl.handle("u", "60岁退休，社平工资8000.5")
    assert field(ctl, "retire_age").value == 60  # the field validator's normal form
    assert field(ctl, "avg_wage").value == 8000.5
    assert last_record(ctl).calls[0].arguments == {
        "values": {"retire_age": "60", "avg_wage": "8000.5"}}


def test_an_unknown_suggested_business_becomes_null(ctl, fake):
    fake.push({"content": "可以先挂失再补办。", **calls(
        ("answer_question", {"question": "卡丢了怎么办", "suggested_business_id": "card_lost"}))})
    turn = ctl.handle("u", "卡丢了怎么办")
    assert turn.suggestion is None and "可以先挂失再补办" in turn.reply
    assert last_record(ctl).calls[0].arguments["suggested_business_id"] is None
    fake.push({"content": "可以先挂失。", **calls(
        ("answer_question", {"question": "卡丢了", "suggested_business_id": "card_loss"}))})
    assert ctl.handle("u", "卡丢了").suggestion.business_id == "card_loss"


def test_invented_keys_and_empty_values_beside_real_ones(ctl, fake):
    start(ctl, fake, "social_transfer")
    fake.push(calls(("provide_field", {"values": {
        "from_city": "南京", "to_city": "", "id_number": None, "social_security_no": "<ID_1>"}})))
    ctl.handle("u", "原来在南京交的，社保号是110105200001100353")
    assert field(ctl, "from_city").value == "南京市"
    assert field(ctl, "to_city").status == "pending"
    assert field(ctl, "id_number").status == "pending"
    assert last_record(ctl).reason == "tool calls"


# -- per-field extraction replies are validated the same way ---------------------------


@pytest.fixture
def per_field(catalog, settings):
    transfer = catalog["social_transfer"].model_copy(update={"extraction": "per_field"})
    catalog = {**catalog, "social_transfer": transfer}
    return make(catalog, settings, LLMEngine(catalog, settings))


def test_per_field_values_are_validated_then_restored(per_field, fake):
    fake.push(calls(("match_business", {"business_id": "social_transfer"})))
    per_field.handle("u", "社保从杭州转到苏州")  # the cities come from the rules
    # id_number and name pending: two parallel calls, both answered "<ID_1>"
    fake.push(*[{"tool_calls": [{"arguments": {"value": "<ID_1>"}}]}] * 2)
    turn = per_field.handle("u", "身份证330122196303150178")
    assert field(per_field, "id_number").value == "330122196303150178"
    assert field(per_field, "name").status == "pending"
    assert turn.usage["turn"].model_calls == 2
    record = last_record(per_field)
    assert record.engine == "llm:per_field"
    assert record.reason == "extract_name: value does not validate"
    assert "330122196303150178" not in str(fake.requests)


def test_per_field_replies_that_do_not_fit_are_dropped(per_field, fake):
    fake.push(calls(("match_business", {"business_id": "social_transfer"})))
    per_field.handle("u", "社保从杭州转到苏州")
    fake.push(*[{"tool_calls": [{"arguments": {"value": "王芳", "confidence": 1}}]}] * 2,
              {"content": None})  # nothing extracted: the whole turn goes to the model
    turn = per_field.handle("u", "王芳")
    assert field(per_field, "name").status == "pending"
    assert turn.usage["turn"].model_calls == 3
    reason = last_record(per_field).reason
    assert "dropped extract_name: arguments: unexpected confidence" in reason
    assert "dropped extract_id_number: arguments: unexpected confidence" in reason


# -- the schema reader on its own -----------------------------------------------------------


def test_one_validator_per_schema_and_bad_schemas_fail_when_built(catalog):
    schema = T.toolset("idle", None, None, catalog)[0]["function"]["parameters"]
    assert validator(schema) is validator(copy.deepcopy(schema))
    with pytest.raises(jsonschema.SchemaError):
        validator({"type": "object", "properties": {"x": {"type": "text"}}})


def test_numbers_become_strings_only_where_the_schema_wants_one():
    schema = {"type": "object", "additionalProperties": False, "properties": {
        "s": {"type": "string"}, "n": {"type": ["number", "string"]},
        "o": {"type": "object", "properties": {"t": {"type": ["string", "null"]}}}}}
    args = read_arguments("x", '{"s": 1.5, "n": 2, "o": {"t": 3}}', schema, {})
    assert args == {"s": "1.5", "n": 2, "o": {"t": "3"}}
    with pytest.raises(ArgumentsRejected, match="s: not of type string"):
        read_arguments("x", '{"s": true}', schema, {})
