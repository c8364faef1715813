"""The twelve shipped businesses: ids, names, types and field keys are a public contract."""

from __future__ import annotations

import re
import string
from pathlib import Path

import pytest

from si_agent.config.loader import load_businesses
from si_agent.config.model import Business

REPO_BUSINESSES = Path(__file__).resolve().parents[2] / "businesses"

CONTRACT = {
    "pension_query": ("养老金查询", "query", ["id_number"]),
    "insurance_record": ("参保缴费记录查询", "query", ["id_number", "start_year", "end_year"]),
    "social_transfer": ("社保关系转移", "handle", ["from_city", "to_city", "id_number", "name"]),
    "card_apply": ("社保卡申领", "handle", ["name", "id_number", "phone", "bank", "mailing_address"]),
    "card_loss": ("社保卡挂失", "handle", ["id_number", "name", "phone", "loss_type"]),
    "unemployment_benefit": ("失业保险金申领", "handle", [
        "id_number", "name", "phone", "separation_date", "separation_reason", "bank_card",
    ]),
    "medical_filing": ("异地就医备案", "handle", [
        "id_number", "name", "insured_city", "destination_city", "filing_type", "start_date",
    ]),
    "pension_certification": ("养老金资格认证", "handle", ["name", "id_number", "phone"]),
    "flexible_employment": ("灵活就业人员参保登记", "handle", [
        "name", "id_number", "phone", "hukou_type", "contribution_grade",
    ]),
    "progress_query": ("办理进度查询", "query", ["application_no"]),
    "phone_change": ("联系电话变更", "handle", ["id_number", "name", "new_phone"]),
    "pension_estimate": ("养老金测算", "query", [
        "retire_age", "contribution_years", "avg_wage", "contribution_index", "account_balance",
    ]),
}

RESULT_PLACEHOLDERS = {
    "pension_query": {"name", "month", "amount", "paid_on", "bank"},
    "insurance_record": {"name", "start_year", "end_year", "total_months", "personal_total", "summary"},
    "social_transfer": {"application_no", "eta_days"},
    "card_apply": {"application_no", "eta_days"},
    "card_loss": {"application_no", "loss_type", "effective_at"},
    "unemployment_benefit": {"application_no", "eta_days"},
    "medical_filing": {"application_no", "valid_until"},
    "pension_certification": {"application_no", "valid_until"},
    "flexible_employment": {"application_no", "base", "monthly_contribution"},
    "progress_query": {"application_no", "business_name", "status", "updated_at", "detail"},
    "phone_change": {"application_no"},
    "pension_estimate": {"basic_pension", "account_pension", "total", "payout_months", "note"},
}


@pytest.fixture(scope="module")
def businesses() -> dict[str, Business]:
    return load_businesses(REPO_BUSINESSES)


def _placeholders(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


# The consultation (type: consult) gathers slots in themes and submits nothing.
CONSULT = {"insurance_consult": ("保险需求咨询", [
    "age", "occupation", "income_range", "is_breadwinner", "children_count", "product_types",
    "coverage_expectation", "premium_budget", "existing_insurance", "health_summary",
    "special_needs"])}


def test_the_contract(businesses):
    assert sorted(businesses) == sorted({**CONTRACT, **CONSULT})
    for business_id, (name, keys) in CONSULT.items():
        b = businesses[business_id]
        assert (b.name, b.type, list(b.field_keys), b.api) == (name, "consult", keys, None)
    for business_id, (name, kind, keys) in CONTRACT.items():
        b = businesses[business_id]
        assert (b.name, b.type, list(b.field_keys)) == (name, kind, keys), business_id


@pytest.mark.parametrize("business_id", sorted(CONTRACT))
def test_every_file_is_complete(businesses, business_id):
    b = businesses[business_id]
    text = (REPO_BUSINESSES / f"{business_id}.yaml").read_text("utf-8")
    assert text.startswith("# ")
    assert b.description and b.keywords and b.max_attempts == 3
    for f in b.fields:
        assert f.label and f.prompt and f.error_msg, f.key
        assert f.error_msg.startswith("请"), f"{f.key}: error_msg should be an instruction"
    if b.type == "handle":
        assert b.require_confirm and "{summary}" in (b.confirm_text or "")
        assert "办理进度查询" in b.api.result_template
    allowed = RESULT_PLACEHOLDERS[business_id] | set(b.field_keys)
    assert _placeholders(b.api.result_template) <= allowed
    if business_id == "pension_estimate":
        assert (b.api.kind, b.api.options) == ("builtin", {"handler": "pension_estimate"})
    else:
        assert b.api.kind == "http"
        assert b.api.options == {
            "url": f"${{SI_BACKEND_URL:-http://demo.si-agent}}/api/{business_id}",
            "method": "POST",
            "timeout": 10,
        }


def test_keywords_do_not_overlap_across_businesses(businesses):
    owners = [(k, b.id) for b in businesses.values() for k in b.keywords]
    clashes = [
        (a, a_id, b, b_id) for a, a_id in owners for b, b_id in owners
        if a_id != b_id and a in b
    ]
    assert clashes == []
    assert not any(k == "养老金" for k, _ in owners)


def test_field_details(businesses):
    record = businesses["insurance_record"]
    for key in ("start_year", "end_year"):
        f = record.field(key)
        assert (f.type, f.min, f.not_future) == ("year", 1990, True)
    [check] = record.checks
    assert (check.left, check.op, check.right) == ("end_year", ">=", "start_year")

    transfer = businesses["social_transfer"]
    assert [(c.left, c.op, c.right) for c in transfer.checks] == [("to_city", "!=", "from_city")]
    filing = businesses["medical_filing"]
    assert [(c.left, c.op, c.right) for c in filing.checks] == [
        ("destination_city", "!=", "insured_city"),
    ]
    assert filing.field("start_date").type == "date"
    assert {"参保地", "参保城市"} <= set(filing.field("insured_city").cues)
    assert {"就医地", "到", "去"} <= set(filing.field("destination_city").cues)

    address = businesses["card_apply"].field("mailing_address")
    assert (address.type, address.min_length, address.max_length) == ("text", 5, 100)
    separation = businesses["unemployment_benefit"].field("separation_date")
    assert (separation.type, separation.not_future) == ("date", True)
    assert businesses["unemployment_benefit"].field("bank_card").type == "bank_card"
    assert {"新手机", "新号码", "改成", "换成"} <= set(businesses["phone_change"].field("new_phone").cues)

    number = businesses["progress_query"].field("application_no")
    assert number.type == "text" and number.pattern == r"^SI\d{14}$"
    assert re.fullmatch(number.pattern, number.example or "")

    estimate = businesses["pension_estimate"]
    assert [(f.type, f.min, f.max) for f in estimate.fields] == [
        ("integer", 50, 70), ("integer", 1, 50), ("number", 1000, 100000),
        ("number", 0.6, 3.0), ("number", 0, 10000000),
    ]


def test_enum_options(businesses):
    def values(business_id, key):
        return [o.value for o in businesses[business_id].field(key).options]

    assert values("card_apply", "bank") == [
        "中国工商银行", "中国农业银行", "中国银行", "中国建设银行", "交通银行", "中国邮政储蓄银行",
    ]
    assert values("card_loss", "loss_type") == ["临时挂失", "正式挂失"]
    assert values("unemployment_benefit", "separation_reason") == [
        "劳动合同期满终止", "用人单位解除劳动合同", "被用人单位辞退", "协商一致解除", "用人单位破产或关闭",
    ]
    assert values("medical_filing", "filing_type") == [
        "异地长期居住", "常驻异地工作", "异地转诊就医", "临时外出就医",
    ]
    assert values("flexible_employment", "hukou_type") == [
        "本地城镇户籍", "本地农村户籍", "外地城镇户籍", "外地农村户籍",
    ]
    assert values("flexible_employment", "contribution_grade") == ["60%", "100%", "150%", "200%", "300%"]
    grade = {o.value: o.aliases for o in businesses["flexible_employment"].field("contribution_grade").options}
    assert {"最低档", "百分之六十", "0.6"} <= set(grade["60%"])
    assert "最高档" in grade["300%"]
    bank = {o.value: o.aliases for o in businesses["card_apply"].field("bank").options}
    assert {"工行", "工商银行"} <= set(bank["中国工商银行"]) and "邮储" in bank["中国邮政储蓄银行"]


def test_pension_certification_steps(businesses):
    b = businesses["pension_certification"]
    assert b.require_confirm
    assert [(s.id, s.handler, s.produces) for s in b.steps] == [
        ("id_card_photo", "id_card_ocr", ("name", "id_number")), ("face_photo", "face_match", ()),
    ]
    assert "身份证" in b.steps[0].prompt and "人脸" in b.steps[1].prompt
