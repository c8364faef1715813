"""The demo backend's notion of "now": China Standard Time (UTC+8).

Kept in one module so tests can freeze time by patching ``now``.
"""

from __future__ import annotations

import calendar
from datetime import date, datetime, timedelta, timezone

CST = timezone(timedelta(hours=8), "CST")


def now() -> datetime:
    """The current time in China Standard Time."""
    return datetime.now(CST)


def today() -> date:
    """Today's date in China Standard Time."""
    return now().date()


def add_months(day: date, months: int) -> date:
    """``day`` moved by ``months`` calendar months, clamped to the month's last day."""
    index = day.year * 12 + day.month - 1 + months
    year, month = divmod(index, 12)
    month += 1
    return date(year, month, min(day.day, calendar.monthrange(year, month)[1]))
