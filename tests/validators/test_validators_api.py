"""The public API of si_agent.validators: types, dispatch, normalisation, masking."""

from __future__ import annotations

import dataclasses

import pytest
from validators_support import TODAY, make_id

from si_agent.config.model import FieldDef
from si_agent.errors import DefinitionError, UnknownBackendError
from si_agent.validators import (
    TYPES,
    Found,
    Result,
    Validator,
    check,
    extract,
    field_types,
    mask,
    register_validator,
)


def test_builtin_types_and_registered_ones():
    assert TYPES == (
        "idcard", "phone", "year", "date", "integer", "number",
        "enum", "city", "name", "bank_card", "text", "multi_enum", "bucket",
    )
    assert set(TYPES) <= set(field_types())
    digits = Validator(lambda raw, **_: Result(raw.isdigit() and len(raw) == 6, raw if raw.isdigit() else None,
                                               None if raw.isdigit() else "邮编应为6位数字。"),
                       lambda text, **_: [])
    register_validator("test_postcode", digits)
    assert "test_postcode" in field_types()
    assert check("test_postcode", " 310000 ") == Result(True, "310000")
    assert check("test_postcode", "31000x").error == "邮编应为6位数字。"
    with pytest.raises(DefinitionError, match="built in"):
        register_validator("phone", digits)


@pytest.mark.parametrize("call", [
    lambda: check("email", "a@b.c"),
    lambda: extract("email", "a@b.c"),
    lambda: mask("email", "a@b.c"),
])
def test_unknown_type_fails_loudly_and_lists_the_valid_ones(call):
    with pytest.raises(UnknownBackendError) as info:
        call()
    assert info.value.kind == "field type"
    assert info.value.name == "email"
    assert info.value.valid == sorted(field_types()) and set(TYPES) <= set(info.value.valid)
    assert isinstance(info.value, LookupError)


def test_results_are_frozen_values():
    result = check("phone", "13812345678")
    assert result == Result(True, "13812345678", None)
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.ok = False  # type: ignore[misc]
    found = extract("phone", "电话13812345678")[0]
    assert found == Found("13812345678", 2, 13, "13812345678")


@pytest.mark.parametrize("type_", TYPES)
def test_empty_or_blank_answer_is_refused_by_every_type(type_):
    options = {"options": [("是", ())]} if type_ == "enum" else {}
    for raw in ("", "   ", "\u3000", None):
        result = check(type_, raw, **options)
        assert not result.ok
        assert result.error == "没有填写内容。"


@pytest.mark.parametrize("type_", TYPES)
def test_extract_on_empty_text_finds_nothing(type_):
    assert extract(type_, "", options=[("是", ())]) == []


def test_full_width_input_is_normalised_and_stripped():
    assert check("phone", "　１３８１２３４５６７８　").value == "13812345678"
    assert check("integer", "６０岁").value == 60
    assert check("idcard", " " + make_id().replace("3", "３") + "\n", today=TODAY).ok


def test_extract_spans_point_into_the_original_text():
    text = "手机：１３８ １２３４ ５６７８，谢谢"
    (found,) = extract("phone", text)
    assert found.value == "13812345678"
    assert text[found.start:found.end] == found.raw == "１３８ １２３４ ５６７８"
    assert check("phone", found.raw).value == found.value


def test_unknown_options_are_ignored():
    assert check("phone", "13812345678", pattern="x", min=1, options=[], foo="bar").ok
    assert check("name", "张三", not_future=True, today=TODAY).ok


def test_field_definition_options_reach_the_validators():
    age = FieldDef(key="age", label="年龄", type="integer", prompt="?", min=16, max=70)
    assert check(age.type, "15岁", **age.validator_options()).error == "数值应在16到70之间。"
    assert check(age.type, "六十", **age.validator_options()).value == 60
    loss = FieldDef(
        key="kind", label="挂失类型", type="enum", prompt="?",
        options=[{"value": "临时挂失", "aliases": ["临挂"]}, {"value": "正式挂失"}],
    )
    assert check(loss.type, "临挂", **loss.validator_options()).value == "临时挂失"
    code = FieldDef(key="code", label="编号", type="text", prompt="?", validate=r"[A-Z]\d{3}")
    assert check(code.type, "A123", **code.validator_options()).ok
    assert not check(code.type, "a123x", **code.validator_options()).ok


def test_every_diagnosis_is_a_chinese_sentence():
    from si_agent.validators import messages

    texts = [v for k, v in vars(messages).items() if k.isupper() and isinstance(v, str)]
    assert len(texts) > 30
    for text in texts:
        assert text.endswith("。"), text
        assert any("\u4e00" <= c <= "\u9fff" for c in text), text


class TestMask:
    def test_idcard_keeps_four_and_four(self):
        assert mask("idcard", "330106199001011234") == "3301**********1234"

    def test_phone_keeps_three_and_four(self):
        assert mask("phone", "13812345678") == "138****5678"

    def test_bank_card_keeps_four_and_four(self):
        assert mask("bank_card", "6222021234567890123") == "6222***********0123"
        assert mask("bank_card", "6222021234567890") == "6222********7890"

    def test_other_types_are_shown_as_they_are(self):
        assert mask("city", "杭州市") == "杭州市"
        assert mask("integer", 60) == "60"
        assert mask("name", "张三") == "张三"

    def test_none_is_empty(self):
        assert mask("idcard", None) == ""
        assert mask("text", None) == ""

    def test_a_short_value_is_starred_entirely(self):
        assert mask("phone", "1381") == "****"
