"""A field's why/help texts and date_span: schema, meaning checks, and coverage of the shipped files."""

from __future__ import annotations

import re
from pathlib import Path
from typing import get_args

import pytest

from si_agent.config.loader import load_businesses, load_schema
from si_agent.config.model import Business, DateSpan, FieldDef

REPO_BUSINESSES = Path(__file__).resolve().parents[2] / "businesses"

# Values citizens are asked for that are about them: say why they are needed.
PERSONAL_TYPES = frozenset({"name", "idcard", "phone", "bank_card"})
PERSONAL_KEYS = frozenset({"mailing_address", "hukou_type"})
# Terms a citizen may not know: a field whose label uses one explains it in help.
TERMS = ("社平工资", "缴费指数", "个人账户", "储存额", "参保", "就医", "挂失", "档次", "户籍",
         "户口", "备案", "编号", "离职", "缴费年限", "退休年龄", "合作银行", "转出", "转入")


@pytest.fixture(scope="module")
def businesses() -> dict[str, Business]:
    return load_businesses(REPO_BUSINESSES)


def _fields(businesses):
    return [(b.id, f) for b in businesses.values() for f in b.fields]


# --- coverage of the shipped businesses (and of every business staff add later) -----------


def test_every_enum_field_explains_its_choices(businesses):
    missing = [f"{b}.{f.key}" for b, f in _fields(businesses) if f.type == "enum" and not f.help]
    assert missing == []


def test_every_field_using_a_policy_term_explains_it(businesses):
    missing = [
        f"{b}.{f.key} ({term})" for b, f in _fields(businesses)
        for term in TERMS if term in f.label and not f.help
    ]
    assert missing == []


def test_every_personal_field_says_why_it_is_needed(businesses):
    personal = [(b, f) for b, f in _fields(businesses)
                if f.type in PERSONAL_TYPES or f.key in PERSONAL_KEYS]
    assert len(personal) >= 20
    assert [f"{b}.{f.key}" for b, f in personal if not f.why] == []


def test_every_date_field_states_how_it_reads_a_span(businesses):
    undecided = [f"{b}.{f.key}" for b, f in _fields(businesses)
                 if f.type == "date" and f.date_span is None]
    assert undecided == []
    # "下个月" as a filing start is its first day; a separation date must match the contract.
    assert businesses["medical_filing"].field("start_date").date_span == "start"
    assert businesses["unemployment_benefit"].field("separation_date").date_span == "ask"


def test_texts_are_short_plain_chinese(businesses):
    for b, f in _fields(businesses):
        for text in filter(None, (f.why, f.help)):
            assert 10 <= len(text) <= 130, f"{b}.{f.key}: {text}"
            assert re.search(r"[\u4e00-\u9fff]", text) and text.endswith("。"), f"{b}.{f.key}"
            assert len(re.findall(r"[。！？]", text)) <= 3, f"{b}.{f.key}: 1-2 sentences"


# --- the model and the validator options ---------------------------------------------------


def test_date_span_reaches_the_validator_only_when_set(businesses):
    start = businesses["medical_filing"].field("start_date")
    assert start.validator_options() == {"date_span": "start"}
    separation = businesses["unemployment_benefit"].field("separation_date")
    assert separation.validator_options() == {"not_future": True, "date_span": "ask"}
    plain = FieldDef(key="day", label="日期", type="date", prompt="哪天？")
    assert plain.date_span is None and "date_span" not in plain.validator_options()


def test_the_schema_lists_the_date_spans_of_the_model():
    field = load_schema()["$defs"]["field"]["properties"]
    assert tuple(field["date_span"]["enum"]) == get_args(DateSpan)
    assert "ask" in field["date_span"]["description"]


# --- what staff get wrong ------------------------------------------------------------------


def test_an_unknown_date_span_lists_the_valid_ones(copy):
    copy.edit("medical_filing.yaml", "    date_span: start\n", "    date_span: end_of_month\n")
    [error] = copy.errors()
    assert re.fullmatch(
        r"medical_filing\.yaml:\d+: fields\[5\]\.date_span: 'end_of_month' is not allowed; "
        r"valid values: end, start, ask", error)


def test_date_span_on_a_field_that_is_not_a_date(copy):
    copy.edit("progress_query.yaml", "    example: SI20261130000042\n",
              "    example: SI20261130000042\n    date_span: end\n")
    assert copy.errors() == [
        "progress_query.yaml:17: fields[0].date_span: date_span applies to date fields only; "
        "field 'application_no' is a text field",
    ]


def test_date_span_on_a_year_field(copy):
    copy.edit("insurance_record.yaml", '    example: "2024"\n', '    example: "2024"\n    date_span: end\n')
    [error] = copy.errors()
    assert error.endswith("fields[2].date_span: date_span applies to date fields only; "
                          "field 'end_year' is a year field")


def test_why_and_help_take_only_business_and_label(copy):
    copy.edit("card_loss.yaml", "    why: 用于核对持卡人身份，防止他人冒名挂失。\n",
              '    why: "{label}是办理【{business}】必需的，{reason}。"\n')
    copy.edit("card_loss.yaml", "    help: 临时挂失（也叫口头挂失）",
              "    help: 关于{label的说明：临时挂失（也叫口头挂失）")
    errors = copy.errors()
    assert len(errors) == 2
    assert re.fullmatch(r"card_loss\.yaml:\d+: fields\[1\]\.why: unknown placeholder \{reason\}; "
                        r"allowed: \{business\}, \{label\}", errors[0])
    assert re.fullmatch(r"card_loss\.yaml:\d+: fields\[3\]\.help: invalid template: .*"
                        r"\(write \{\{ and \}\} for literal braces\)", errors[1])


def test_empty_texts_are_rejected(copy):
    copy.edit("card_loss.yaml", "    why: 用于核对持卡人身份，防止他人冒名挂失。\n", '    why: ""\n')
    [error] = copy.errors()
    assert error.endswith("fields[1].why: must not be empty")
