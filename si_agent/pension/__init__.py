"""The ``pension_estimate`` builtin: a monthly pension estimate by the national formula.

    basic pension    = avg_wage × (1 + contribution_index) / 2 × contribution_years × 1%
    account pension  = account_balance / payout months for the retirement age
    total            = basic pension + account pension (both already rounded)

Each part is rounded to 0.01 yuan (ROUND_HALF_UP), so the total always equals
the sum of the two parts shown to the citizen.

A package of its own, importing nothing of si_agent but ``errors``: the
``builtin`` executor (``si_agent.executor.handlers``) computes with it, and so
does the demo backend's ``pension_estimate`` service, which stands for a remote
government system and imports no executor.
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from typing import Any

from si_agent.errors import ExecutorError
from si_agent.pension import texts

# Payout months of the personal account by retirement age (national table).
PAYOUT_MONTHS: dict[int, int] = {
    40: 233, 41: 230, 42: 226, 43: 223, 44: 220, 45: 216, 46: 212, 47: 207, 48: 204,
    49: 199, 50: 195, 51: 190, 52: 185, 53: 180, 54: 175, 55: 170, 56: 164, 57: 158,
    58: 152, 59: 145, 60: 139, 61: 132, 62: 125, 63: 117, 64: 109, 65: 101, 66: 93,
    67: 84, 68: 75, 69: 65, 70: 56,
}
MIN_RETIRE_AGE, MAX_RETIRE_AGE = 50, 70
MIN_YEARS, MAX_YEARS, FULL_YEARS = 1, 50, 15
MIN_INDEX, MAX_INDEX = Decimal("0.6"), Decimal("3.0")
CENT = Decimal("0.01")
# Beyond this an amount is a typing mistake (and overflows decimal rounding).
MAX_AMOUNT = Decimal("1e12")


def pension_estimate(values: Mapping[str, Any]) -> dict:
    """Estimate the monthly pension; bad inputs raise ``ExecutorError`` with field errors."""
    errors: dict[str, str] = {}
    age = _integer(values.get("retire_age"), MIN_RETIRE_AGE, MAX_RETIRE_AGE)
    if age is None:
        errors["retire_age"] = texts.RETIRE_AGE_INVALID
    years = _integer(values.get("contribution_years"), MIN_YEARS, MAX_YEARS)
    if years is None:
        errors["contribution_years"] = texts.CONTRIBUTION_YEARS_INVALID
    wage = _decimal(values.get("avg_wage"))
    if wage is None or wage <= 0:
        errors["avg_wage"] = texts.AVG_WAGE_INVALID
    index = _decimal(values.get("contribution_index"))
    if index is None or not MIN_INDEX <= index <= MAX_INDEX:
        errors["contribution_index"] = texts.CONTRIBUTION_INDEX_INVALID
    balance = _decimal(values.get("account_balance"))
    if balance is None or not 0 <= balance <= MAX_AMOUNT:
        errors["account_balance"] = texts.ACCOUNT_BALANCE_INVALID
    if wage is not None and wage > MAX_AMOUNT:
        errors["avg_wage"] = texts.AVG_WAGE_INVALID
    if errors or age is None or years is None or wage is None or index is None \
            or balance is None:
        raise ExecutorError(texts.ESTIMATE_INVALID, field_errors=errors, retryable=False)

    months = PAYOUT_MONTHS[age]
    basic = _round(wage * (1 + index) / 2 * years / 100)
    account = _round(balance / months)
    total = basic + account
    return {
        "basic_pension": f"{basic:.2f}",
        "account_pension": f"{account:.2f}",
        "total": f"{total:.2f}",
        "payout_months": months,
        "note": texts.UNDER_15_YEARS if years < FULL_YEARS else "",
    }


def _round(amount: Decimal) -> Decimal:
    return amount.quantize(CENT, rounding=ROUND_HALF_UP)


def _decimal(raw: Any) -> Decimal | None:
    """A finite Decimal from an int, float, Decimal or numeric string; None otherwise."""
    if raw is None or isinstance(raw, bool):
        return None
    try:
        value = Decimal(str(raw).strip())
    except InvalidOperation:
        return None
    return value if value.is_finite() else None


def _integer(raw: Any, low: int, high: int) -> int | None:
    value = _decimal(raw)
    if value is None or value != value.to_integral_value() or not low <= value <= high:
        return None
    return int(value)
