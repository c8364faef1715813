"""The pension_estimate builtin: the national formula, the payout table, rounding, errors."""

from __future__ import annotations

import pytest

from si_agent.errors import ConfigErrors, ExecutorError, UnknownBackendError
from si_agent.executor import HANDLERS, BuiltinExecutor, BuiltinOptions, Executors
from si_agent.pension import PAYOUT_MONTHS, pension_estimate

NOTE_UNDER_15 = "提示：累计缴费不满15年的，一般不能按月领取基本养老金，可延长缴费或补缴至满15年。"


def estimate(**overrides) -> dict:
    values = {"retire_age": 60, "contribution_years": 20, "avg_wage": 8000,
              "contribution_index": 1.0, "account_balance": 100000}
    values.update(overrides)
    return pension_estimate(values)


def test_typical_case_at_60():
    # basic 8000 × (1 + 1.0) / 2 × 20 × 1% = 1600.00; account 100000 / 139 = 719.424… → 719.42
    assert estimate() == {
        "basic_pension": "1600.00",
        "account_pension": "719.42",
        "total": "2319.42",
        "payout_months": 139,
        "note": "",
    }


def test_age_57_uses_its_own_table_row():
    # 57 → 158 months. basic 9500 × 1.8 / 2 × 32 × 1% = 2736.00; 88888 / 158 = 562.582… → 562.58
    result = estimate(retire_age=57, contribution_years=32, avg_wage="9500",
                      contribution_index="0.8", account_balance="88888")
    assert result["payout_months"] == 158
    assert result["basic_pension"] == "2736.00"
    assert result["account_pension"] == "562.58"
    assert result["total"] == "3298.58"


def test_under_15_years_adds_the_note():
    # basic 6000 × 1.6 / 2 × 10 × 1% = 480.00; 30000 / 170 = 176.470… → 176.47
    result = estimate(retire_age=55, contribution_years=10, avg_wage=6000,
                      contribution_index=0.6, account_balance=30000)
    assert (result["basic_pension"], result["account_pension"], result["total"]) == (
        "480.00", "176.47", "656.47")
    assert result["note"] == NOTE_UNDER_15
    assert estimate(contribution_years=15)["note"] == ""


def test_rounding_is_half_up_on_each_part():
    # basic 1234.5 × 2 / 2 × 1 × 1% = 12.345 → 12.35 (banker's rounding would give 12.34)
    # account 13900.695 / 139 = 100.005 → 100.01
    result = estimate(avg_wage="1234.5", contribution_index=1, contribution_years=1,
                      account_balance="13900.695")
    assert result["basic_pension"] == "12.35"
    assert result["account_pension"] == "100.01"
    assert result["total"] == "112.36"


def test_total_is_the_sum_of_the_rounded_parts():
    # 7777.77 × 2.2 / 2 × 27 × 1% = 2309.99769 → 2310.00; 123456.78 / 101 = 1222.344… → 1222.34
    result = estimate(retire_age=65, contribution_years=27, avg_wage="7777.77",
                      contribution_index="1.2", account_balance="123456.78")
    assert result["basic_pension"] == "2310.00"
    assert result["account_pension"] == "1222.34"
    assert result["total"] == "3532.34"


def test_bounds_are_inclusive():
    assert estimate(retire_age=50)["payout_months"] == 195
    assert estimate(retire_age=70)["payout_months"] == 56
    assert estimate(contribution_years=1, contribution_index=0.6)["basic_pension"] == "64.00"
    assert estimate(contribution_years=50, contribution_index=3.0)["basic_pension"] == "8000.00"
    assert estimate(account_balance=0)["account_pension"] == "0.00"


def test_payout_table_is_the_national_one():
    assert len(PAYOUT_MONTHS) == 31
    assert (PAYOUT_MONTHS[40], PAYOUT_MONTHS[50], PAYOUT_MONTHS[55], PAYOUT_MONTHS[60],
            PAYOUT_MONTHS[70]) == (233, 195, 170, 139, 56)
    months = [PAYOUT_MONTHS[a] for a in range(40, 71)]
    assert months == sorted(months, reverse=True)


@pytest.mark.parametrize(
    ("key", "bad"),
    [
        ("retire_age", 49), ("retire_age", 71), ("retire_age", 60.5), ("retire_age", "六十"),
        ("retire_age", True), ("contribution_years", 0), ("contribution_years", 51),
        ("avg_wage", 0), ("avg_wage", "abc"), ("avg_wage", float("nan")),
        ("contribution_index", 0.59), ("contribution_index", 3.01),
        ("account_balance", -1), ("account_balance", None),
    ],
)
def test_bad_inputs_raise_field_errors(key, bad):
    with pytest.raises(ExecutorError) as err:
        estimate(**{key: bad})
    assert set(err.value.field_errors) == {key}
    assert err.value.retryable is False
    assert err.value.message


def test_every_bad_input_is_reported_at_once():
    with pytest.raises(ExecutorError) as err:
        pension_estimate({})
    assert set(err.value.field_errors) == {
        "retire_age", "contribution_years", "avg_wage", "contribution_index", "account_balance"}


def test_numeric_strings_are_accepted():
    assert estimate(retire_age="60", contribution_years="20", avg_wage="8000.00") == estimate()


def test_runs_through_executors_by_handler_name(executors: Executors, make_business):
    biz = make_business("pension_estimate", kind="builtin", type="query",
                        handler="pension_estimate")
    values = {"retire_age": 60, "contribution_years": 20, "avg_wage": 8000,
              "contribution_index": 1.0, "account_balance": 100000}
    assert executors.run(biz, values, idempotency_key="k")["total"] == "2319.42"


def test_unknown_handler_lists_the_valid_ones(executors: Executors, make_business):
    biz = make_business("x", kind="builtin", handler="no_such_handler")
    with pytest.raises(ConfigErrors) as err:
        executors.run(biz, {}, idempotency_key="k")
    assert [str(e) for e in err.value.errors] == [
        "business x:0: api.options.handler: unknown builtin handler 'no_such_handler'; "
        "valid handlers: pension_estimate",
    ]


def test_handlers_registered_later_are_found(
    executors: Executors, make_business, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setitem(HANDLERS, "echo_for_test", lambda values: {"echo": values["x"]})
    biz = make_business("echo", kind="builtin", handler="echo_for_test")
    assert executors.run(biz, {"x": 1}, idempotency_key="k") == {"echo": 1}
    assert isinstance(executors.get(biz), BuiltinExecutor)
    assert executors.options(biz) == BuiltinOptions(handler="echo_for_test")


def test_unknown_api_kind(executors: Executors, make_business):
    biz = make_business("x")
    odd = biz.model_copy(update={"api": biz.api.model_copy(update={"kind": "ftp"})})
    with pytest.raises(UnknownBackendError) as err:
        executors.run(odd, {}, idempotency_key="k")
    assert err.value.kind == "api kind"
    assert {"builtin", "http"} <= set(err.value.valid)
    assert "ftp" not in err.value.valid


def test_absurd_amounts_are_field_errors_not_crashes():
    from si_agent.errors import ExecutorError
    from si_agent.pension import pension_estimate

    with pytest.raises(ExecutorError) as err:
        pension_estimate({"retire_age": 60, "contribution_years": 30, "avg_wage": "1e40",
                          "contribution_index": 1.0, "account_balance": "1e40"})
    assert set(err.value.field_errors) == {"avg_wage", "account_balance"}
