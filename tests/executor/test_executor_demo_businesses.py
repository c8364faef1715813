"""Every demo business through HttpExecutor and the in-process demo host.

Each request is a real HTTP exchange through httpx (WSGITransport), answered
by the demo backend over a fresh SQLite file.
"""

from __future__ import annotations

import re
from datetime import date, timedelta

import pytest

from si_agent.demo_backend import clock
from si_agent.demo_backend.seed import PERSONS
from si_agent.errors import ExecutorError
from si_agent.executor import Executors

APP_NO = re.compile(r"^SI\d{14}$")
ZHANG_WEI, LI_XIUYING, WANG_FANG, LIU_YANG, CHEN_JING, ZHAO_LEI = (p.id_number for p in PERSONS)
UNKNOWN_ID = "33010619900101123X"  # a valid number that is not a demo person

HANDLE_CASES = {
    "social_transfer": (
        {"from_city": "杭州市", "to_city": "苏州市", "id_number": LIU_YANG, "name": "刘洋"},
        {"eta_days": 15},
    ),
    "card_apply": (
        {"name": "王芳", "id_number": WANG_FANG, "phone": "13800138003", "bank": "中国农业银行",
         "mailing_address": "江苏省苏州市姑苏区人民路100号"},
        {"eta_days": 20},
    ),
    "card_loss": (
        {"id_number": ZHANG_WEI, "name": "张伟", "phone": "13800138001", "loss_type": "临时挂失"},
        {"loss_type": "临时挂失", "effective_at": "立即生效"},
    ),
    "unemployment_benefit": (
        {"id_number": CHEN_JING, "name": "陈静", "phone": "13800138005",
         "separation_date": "2025-06-30", "separation_reason": "劳动合同期满终止",
         "bank_card": "6013820800012345672"},
        {"eta_days": 10},
    ),
    "medical_filing": (
        {"id_number": LI_XIUYING, "name": "李秀英", "insured_city": "上海市",
         "destination_city": "成都市", "filing_type": "异地长期居住", "start_date": "2026-12-01"},
        {"valid_until": "2027-12-01"},
    ),
    "pension_certification": (
        {"id_card_photo": {"id_number": ZHANG_WEI, "name": "张伟"}, "face_photo": "matched"},
        {},
    ),
    "flexible_employment": (
        {"name": "赵磊", "id_number": ZHAO_LEI, "phone": "13800138006",
         "hukou_type": "外地城镇户籍", "contribution_grade": "60%"},
        {"base": "4500.00", "monthly_contribution": "900.00"},
    ),
    "phone_change": (
        {"id_number": WANG_FANG, "name": "王芳", "new_phone": "13912345678"},
        {},
    ),
}
STEP_BUSINESSES = {"pension_certification": ("id_card_photo", "face_photo")}


@pytest.fixture
def handle(make_business):
    """``handle(business_id)`` -> (Business, sample values, expected result items)."""

    def build(business_id: str):
        values, expected = HANDLE_CASES[business_id]
        steps = STEP_BUSINESSES.get(business_id, ())
        keys = [k for k in values if k not in steps]
        return make_business(business_id, keys, steps=steps), values, expected

    return build


@pytest.mark.parametrize("business_id", sorted(HANDLE_CASES))
def test_handle_business_success(executors: Executors, business_id: str, handle, make_business):
    biz, values, expected = handle(business_id)
    result = executors.run(biz, values, idempotency_key=f"key-{business_id}")
    assert APP_NO.match(result["application_no"])
    assert result["application_no"][2:10] == clock.today().strftime("%Y%m%d")
    for key, value in expected.items():
        assert result[key] == value
    # progress_query finds every new application, accepted, under its business name
    progress = executors.run(make_business("progress_query", ["application_no"], type="query"),
                             {"application_no": result["application_no"]}, idempotency_key="k")
    assert progress["status"] == "已受理"
    assert progress["application_no"] == result["application_no"]
    assert progress["business_name"]
    assert progress["detail"]


def test_pension_certification_is_valid_for_a_year(executors: Executors, handle):
    biz, values, _ = handle("pension_certification")
    result = executors.run(biz, values, idempotency_key="cert")
    today = clock.today()
    assert result["valid_until"] == clock.add_months(today, 12).isoformat()


def test_pension_certification_accepts_plain_step_strings(executors: Executors, make_business):
    biz = make_business("pension_certification", steps=("id_card_photo", "face_photo"))
    result = executors.run(biz, {"id_card_photo": "ok", "face_photo": "ok"}, idempotency_key="c2")
    assert APP_NO.match(result["application_no"])


@pytest.mark.parametrize(
    ("filing_type", "start", "until"),
    [
        ("临时外出就医", "2026-12-01", "2027-06-01"),
        ("临时外出就医", "2026-08-31", "2027-02-28"),
        ("常驻异地工作", "2028-02-29", "2029-02-28"),
        ("异地转诊就医", "2026-12-01", "2027-12-01"),
    ],
)
def test_medical_filing_validity(executors: Executors, filing_type, start, until, handle):
    biz, values, _ = handle("medical_filing")
    result = executors.run(biz, {**values, "filing_type": filing_type, "start_date": start},
                           idempotency_key=f"filing-{start}")
    assert result["valid_until"] == until


@pytest.mark.parametrize(
    ("grade", "base", "monthly"),
    [("60%", "4500.00", "900.00"), ("100%", "7500.00", "1500.00"), ("1.5", "11250.00", "2250.00"),
     (2, "15000.00", "3000.00"), ("300", "22500.00", "4500.00")],
)
def test_flexible_employment_grades(executors: Executors, grade, base, monthly, handle):
    biz, values, _ = handle("flexible_employment")
    result = executors.run(biz, {**values, "contribution_grade": grade},
                           idempotency_key=f"f-{grade}")
    assert (result["base"], result["monthly_contribution"]) == (base, monthly)


def test_unknown_people_are_accepted_for_handle_businesses(executors: Executors, handle):
    biz, values, _ = handle("social_transfer")
    result = executors.run(biz, {**values, "id_number": UNKNOWN_ID, "name": "随便"},
                           idempotency_key="unknown")
    assert APP_NO.match(result["application_no"])


def test_application_numbers_increase(executors: Executors, handle):
    biz, values, _ = handle("card_loss")
    first = executors.run(biz, values, idempotency_key="a")["application_no"]
    second = executors.run(biz, values, idempotency_key="b")["application_no"]
    assert int(second[10:]) == int(first[10:]) + 1


# ---- queries -------------------------------------------------------------------


def test_pension_query(executors: Executors, make_business):
    result = executors.run(make_business("pension_query", ["id_number"], type="query"),
                           {"id_number": ZHANG_WEI}, idempotency_key="k")
    today = clock.today()
    latest = today.replace(day=15) if today.day >= 15 else clock.add_months(
        today.replace(day=15), -1)
    assert result == {
        "name": "张伟",
        "month": f"{latest.year}年{latest.month}月",
        "amount": "3256.80",
        "paid_on": latest.isoformat(),
        "bank": "中国工商银行（尾号8821）",
    }


@pytest.mark.parametrize("who", [WANG_FANG, UNKNOWN_ID])
def test_pension_query_not_retired_or_unknown(executors: Executors, who, make_business):
    biz = make_business("pension_query", ["id_number"], type="query")
    with pytest.raises(ExecutorError) as err:
        executors.run(biz, {"id_number": who}, idempotency_key="k")
    assert err.value.status == 404
    assert err.value.retryable is False
    assert err.value.field_errors == {"id_number": "未查询到该身份证号的养老金发放记录。"}


def test_insurance_record(executors: Executors, make_business):
    biz = make_business("insurance_record", ["id_number", "start_year", "end_year"], type="query")
    result = executors.run(biz, {"id_number": WANG_FANG, "start_year": 2019, "end_year": 2020},
                           idempotency_key="k")
    assert result == {
        "name": "王芳",
        "start_year": 2019,
        "end_year": 2020,
        "total_months": 24,
        "personal_total": "11808.00",
        "summary": "2019年：缴费12个月，缴费基数6000.00元，个人缴纳5760.00元\n"
                   "2020年：缴费12个月，缴费基数6300.00元，个人缴纳6048.00元",
    }


def test_insurance_record_partial_years(executors: Executors, make_business):
    biz = make_business("insurance_record", ["id_number", "start_year", "end_year"], type="query")
    result = executors.run(biz, {"id_number": LIU_YANG, "start_year": 2015, "end_year": 2018},
                           idempotency_key="k")
    assert result["total_months"] == 6
    assert result["summary"] == "2018年：缴费6个月，缴费基数5900.00元，个人缴纳2832.00元"


def test_insurance_record_empty_range(executors: Executors, make_business):
    biz = make_business("insurance_record", ["id_number", "start_year", "end_year"], type="query")
    result = executors.run(biz, {"id_number": ZHAO_LEI, "start_year": "2015", "end_year": "2019"},
                           idempotency_key="k")
    assert result["total_months"] == 0
    assert result["personal_total"] == "0.00"
    assert result["summary"] == "该期间没有缴费记录。"


def test_insurance_record_errors(executors: Executors, make_business):
    biz = make_business("insurance_record", ["id_number", "start_year", "end_year"], type="query")
    with pytest.raises(ExecutorError) as err:
        executors.run(biz, {"id_number": UNKNOWN_ID, "start_year": 2019, "end_year": 2020},
                      idempotency_key="k")
    assert (err.value.status, err.value.field_errors) == (
        404, {"id_number": "未查询到该身份证号的参保记录。"})
    with pytest.raises(ExecutorError) as err:
        executors.run(biz, {"id_number": WANG_FANG, "start_year": 2020, "end_year": 2019},
                      idempotency_key="k")
    assert err.value.status == 422
    assert set(err.value.field_errors) == {"end_year"}


def test_progress_query_of_seeded_applications(executors: Executors, make_business):
    biz = make_business("progress_query", ["application_no"], type="query")
    result = executors.run(biz, {"application_no": "SI20260915000001"}, idempotency_key="k")
    assert result["business_name"] == "社保关系转移"
    assert result["status"] == "办理中"
    assert result["updated_at"] == "2026-09-22 10:30"
    assert executors.run(biz, {"application_no": "si20261020000001"},
                         idempotency_key="k")["status"] == "已制卡"
    assert executors.run(biz, {"application_no": "SI20261105000001"},
                         idempotency_key="k")["status"] == "已办结"


def test_progress_query_unknown(executors: Executors, make_business):
    biz = make_business("progress_query", ["application_no"], type="query")
    with pytest.raises(ExecutorError) as err:
        executors.run(biz, {"application_no": "SI20990101999999"}, idempotency_key="k")
    assert err.value.status == 404
    assert err.value.field_errors == {"application_no": "未查询到该受理编号，请核对后重新输入。"}


def test_pension_estimate_is_also_served_over_http(executors: Executors, make_business):
    keys = ["retire_age", "contribution_years", "avg_wage", "contribution_index",
            "account_balance"]
    biz = make_business("pension_estimate", keys, type="query")
    values = dict(zip(keys, [60, 20, 8000, 1.0, 100000], strict=True))
    assert executors.run(biz, values, idempotency_key="k")["total"] == "2319.42"
    with pytest.raises(ExecutorError) as err:
        executors.run(biz, {**values, "retire_age": 80}, idempotency_key="k")
    assert err.value.status == 422
    assert set(err.value.field_errors) == {"retire_age"}


def test_get_method_sends_query_parameters(executors: Executors, make_business):
    biz = make_business("insurance_record", ["id_number", "start_year", "end_year"],
                        type="query", method="GET")
    result = executors.run(biz, {"id_number": WANG_FANG, "start_year": 2019, "end_year": 2019},
                           idempotency_key="k")
    assert result["total_months"] == 12


# ---- refusals ----------------------------------------------------------------------


def test_name_mismatch_is_a_field_error(executors: Executors, handle):
    biz, values, _ = handle("card_apply")
    with pytest.raises(ExecutorError) as err:
        executors.run(biz, {**values, "name": "王小芳"}, idempotency_key="mismatch")
    assert err.value.status == 422
    assert err.value.retryable is False
    assert err.value.field_errors == {"name": "姓名与身份证号码不一致。"}


def test_same_phone_is_a_field_error(executors: Executors, handle):
    biz, values, _ = handle("phone_change")
    with pytest.raises(ExecutorError) as err:
        executors.run(biz, {**values, "new_phone": "13800138003"}, idempotency_key="same")
    assert err.value.field_errors == {"new_phone": "新手机号与原手机号相同。"}


def test_same_city_transfer_is_a_field_error(executors: Executors, handle):
    biz, values, _ = handle("social_transfer")
    with pytest.raises(ExecutorError) as err:
        executors.run(biz, {**values, "to_city": "杭州市"}, idempotency_key="same-city")
    assert set(err.value.field_errors) == {"to_city"}


def test_future_separation_date_is_a_field_error(executors: Executors, handle):
    biz, values, _ = handle("unemployment_benefit")
    tomorrow = (clock.today() + timedelta(days=1)).isoformat()
    with pytest.raises(ExecutorError) as err:
        executors.run(biz, {**values, "separation_date": tomorrow}, idempotency_key="future")
    assert set(err.value.field_errors) == {"separation_date"}


def test_missing_fields_are_a_400_without_field_errors(executors: Executors, handle):
    biz, values, _ = handle("card_apply")
    partial = {k: v for k, v in values.items() if k != "mailing_address"}
    with pytest.raises(ExecutorError) as err:
        executors.run(biz, partial, idempotency_key="missing")
    assert err.value.status == 400
    assert err.value.retryable is False
    assert "mailing_address" in err.value.message
    assert err.value.field_errors == {}


def test_field_errors_on_fields_the_business_lacks_are_dropped(
    executors: Executors, handle, make_business
):
    # The backend blames "name", but this business never asked for a name.
    _, values, _ = handle("card_apply")
    biz = make_business("card_apply", ["id_number", "phone", "bank", "mailing_address"])
    with pytest.raises(ExecutorError) as err:
        executors.run(biz, {**values, "name": "王小芳"}, idempotency_key="drop")
    assert err.value.field_errors == {}
    assert err.value.message == "姓名与身份证号码不一致。"


def test_unknown_business_is_a_404(executors: Executors, make_business):
    with pytest.raises(ExecutorError) as err:
        executors.run(make_business("no_such_business"), {}, idempotency_key="x")
    assert err.value.status == 404
    assert err.value.retryable is False


def test_dates_and_decimals_in_values_are_serialised(executors: Executors, handle):
    from decimal import Decimal

    biz, values, _ = handle("medical_filing")
    result = executors.run(biz, {**values, "start_date": date(2026, 12, 1),
                                 "extra": Decimal("1.5")}, idempotency_key="typed")
    assert result["valid_until"] == "2027-12-01"
