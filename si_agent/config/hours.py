"""Office hours as staff write them (``SI_HANDOFF_HOURS``): ``mon-fri 09:00-17:00``.

    hours = OfficeHours.parse("mon-fri 09:00-12:00,13:30-17:00; sat 09:00-12:00")
    hours.open_at(datetime.now(zone))      # True within a range

A rule is days (``mon``..``sun``, a range ``mon-fri`` or a list ``mon,wed``) and one
or more ``HH:MM-HH:MM`` ranges; rules are separated by ``;``. ``always`` (or
``24x7``) is every minute, ``never`` (or an empty value) none: tickets only wait.
A wrong value raises ``ValueError`` saying what is accepted.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, time

DAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
_CHINESE_DAYS = dict(zip(DAYS, ("周一", "周二", "周三", "周四", "周五", "周六", "周日"), strict=True))
_RANGE = re.compile(r"(\d{1,2}):(\d{2})-(\d{1,2}):(\d{2})")
_FORM = "days and times like 'mon-fri 09:00-17:00' (rules separated by ';'), 'always' or 'never'"


@dataclass(frozen=True)
class OfficeHours:
    """When people answer hand-offs: per weekday (0 = Monday), the ``[start, end)`` ranges."""

    ranges: tuple[tuple[int, time, time], ...]
    text: str  # as written, for messages

    @classmethod
    def parse(cls, text: str) -> OfficeHours:
        value = (text or "").strip().lower()
        if value in ("", "never", "off"):
            return cls((), value or "never")
        if value in ("always", "24x7", "24/7"):
            return cls(tuple((d, time(0), time.max) for d in range(7)), value)
        ranges: list[tuple[int, time, time]] = []
        for rule in (r.strip() for r in value.split(";") if r.strip()):
            days_part, _, times_part = rule.partition(" ")
            days = _days(days_part, text)
            spans = [s.strip() for s in times_part.split(",") if s.strip()]
            if not spans:
                raise ValueError(f"office hours {text!r}: no times in {rule!r}; use {_FORM}")
            for span in spans:
                match = _RANGE.fullmatch(span)
                if not match:
                    raise ValueError(f"office hours {text!r}: {span!r} is not HH:MM-HH:MM; "
                                     f"use {_FORM}")
                h1, m1, h2, m2 = (int(g) for g in match.groups())
                if h1 > 23 or h2 > 24 or m1 > 59 or m2 > 59 or (h2 == 24 and m2):
                    raise ValueError(f"office hours {text!r}: {span!r} is not a time of day")
                start = time(h1, m1)
                end = time.max if h2 == 24 else time(h2, m2)
                if end <= start:
                    raise ValueError(f"office hours {text!r}: {span!r} ends before it starts")
                ranges += [(d, start, end) for d in days]
        return cls(tuple(ranges), text.strip())

    @property
    def chinese(self) -> str:
        """The hours as a citizen reads them: "mon-fri 09:00-12:00,13:00-17:00; sat
        09:00-12:00" → "周一至周五 09:00-12:00、13:00-17:00；周六 09:00-12:00"."""
        value = self.text.strip().lower()
        if value in ("always", "24x7", "24/7"):
            return "全天"
        out = re.sub(r"\b(" + "|".join(DAYS) + r")\b", lambda m: _CHINESE_DAYS[m.group()], value)
        out = re.sub(r"(?<=[一二三四五六日])-(?=周)", "至", out)
        return re.sub(r"\s*;\s*", "；", out.replace(",", "、"))

    def open_at(self, when: datetime) -> bool:
        """Whether ``when`` (in the office's time zone) is within the hours."""
        day, now = when.weekday(), when.time()
        return any(d == day and start <= now < end for d, start, end in self.ranges)


def _days(part: str, text: str) -> list[int]:
    days: list[int] = []
    for item in (p for p in part.split(",") if p):
        first, sep, last = item.partition("-")
        if first not in DAYS or (sep and last not in DAYS):
            raise ValueError(f"office hours {text!r}: {item!r} is not a day or a range of days "
                             f"({', '.join(DAYS)}); use {_FORM}")
        a, b = DAYS.index(first), DAYS.index(last) if sep else DAYS.index(first)
        days += list(range(a, b + 1)) if a <= b else [*range(a, 7), *range(0, b + 1)]
    if not days:
        raise ValueError(f"office hours {text!r}: no days; use {_FORM}")
    return days
