"""Years and calendar dates.

``year`` takes "2019", "2019年", "二〇一九年", "今年"/"去年"/"前年", and a
two-digit "19年" or "98年". A two-digit year is read as the latest year not
after today: with today in 2025, "19年" is 2019 and "98年" is 1998. Without
"年", two digits are not a year.

``date`` takes 2024-03-05, 2024/3/5, 2024.3.5, 20240305, 2024年3月5日 (or 号),
二〇二四年三月五日, 今天/昨天/前天, 去年6月30号, 上个月15号, and a date without a
year ("6月30号"): with ``not_future`` the latest such day not after today, else
the next such day from today. Its value is the ISO string "2024-03-05".

Anything else ("上个月底", "下周一", "三个月前", "去年年底", "春节后", "明天")
is read by jionlp (the ``dates`` extra) through :mod:`.relative_dates`, which
documents the readings. A point reading is one day. A span ("去年年底" is 2025-11-01 to
2025-12-31, "月初" the 1st to the 5th, "上旬" the 1st to the 10th, "春节后"
from the festival to today) becomes one day by the ``date_span`` option:
"end" takes its last day, "start" its first, and "ask" (the default) refuses
the answer with a message that quotes the span and asks for the day. With
``not_future`` a span is cut at today, so "end" of "年底" is at most today. In
``extract`` a span found under "ask" is a :class:`Found` whose value is None:
a date, but which day is still to be asked.

``check`` takes the whole answer; if it is no date form, a sentence with one
relative or colloquial date in it ("上个月底离的职") is read as that date.

``today`` (a ``datetime.date``) anchors the relative words, the two-digit
years and ``not_future``; it defaults to the real date.
"""

from __future__ import annotations

import re
from datetime import date, timedelta
from typing import Literal

from ..errors import DefinitionError
from . import messages, relative_dates
from .base import (
    Found,
    Result,
    Spans,
    invalid,
    longest_first,
    overlaps,
    range_error,
    resolve_today,
    valid,
)
from .identifiers import identifier_spans

FIRST_YEAR = 1900
LAST_YEAR = 2100

_CN_DIGITS = {c: i for i, c in enumerate("〇一二三四五六七八九")} | {"零": 0}
_CN_DIGIT_CLASS = "〇零一二三四五六七八九"
_CN_DIGIT_CLASS_RE = f"[{_CN_DIGIT_CLASS}]"

_RELATIVE_YEARS = {"今年": 0, "本年": 0, "去年": 1, "前年": 2}
_RELATIVE_DAYS = {"今天": 0, "今日": 0, "昨天": 1, "昨日": 1, "前天": 2}

_Y = rf"(?P<y>\d{{4}}|\d{{2}}|[{_CN_DIGIT_CLASS}]{{4}})"
_M = r"(?P<m>\d{1,2}|[一二三四五六七八九十]{1,2})"
_D = r"(?P<d>\d{1,2}|[一二三四五六七八九十]{1,3})"

_YEAR = re.compile(rf"(\d{{4}}|[{_CN_DIGIT_CLASS}]{{4}})(?:年度|年)?")
_YEAR_2 = re.compile(rf"(\d{{2}}|[{_CN_DIGIT_CLASS}]{{2}})(?:年度|年)")

_DATE_FORMS = (
    re.compile(rf"(?:{_Y}年|(?P<ry>今年|本年|去年|前年)){_M}月{_D}[日号]?"),
    re.compile(r"(?P<y>\d{4})(?P<sep>[-/.])(?P<m>\d{1,2})(?P=sep)(?P<d>\d{1,2})"),
    re.compile(r"(?P<y>\d{4})(?P<m>\d{2})(?P<d>\d{2})"),
)
_DATE_NO_DAY = re.compile(rf"{_Y}年{_M}月份?|\d{{4}}[-/.]\d{{1,2}}")
_DATE_NO_YEAR = re.compile(rf"{_M}月{_D}[日号]?")
_RELATIVE_MONTHS = {"上个月": -1, "上月": -1, "这个月": 0, "本月": 0, "下个月": 1, "下月": 1}
_DATE_REL_MONTH = re.compile(rf"(?P<rel>{'|'.join(_RELATIVE_MONTHS)}){_D}[日号]")

_YEAR_IN_TEXT = re.compile(
    r"今年|去年|前年"
    r"|(?<![\d.])\d{4}(?![\d元块岁个万千百亿%人次号]|\.\d)(?:年度|年)?"
    rf"|(?<![{_CN_DIGIT_CLASS}十])[{_CN_DIGIT_CLASS}]{{4}}年"
    # Four digits said one by one are a year without 年 too ("二零一九到二零二一"),
    # as "2019" is, when they read 19xx or 20xx and stand alone.
    rf"|(?<![{_CN_DIGIT_CLASS}十百千万点])(?:一九|二[零〇]){_CN_DIGIT_CLASS_RE}{{2}}"
    rf"(?![{_CN_DIGIT_CLASS}十百千万亿点])(?:年度)?"
    # Two digits before 年 are a year only after a word that introduces a
    # time ("从15年", "我98年"), not after 交了/缴费 where "15年" is a duration.
    r"|(?<![^\s,，。、；;:：!！?？是在从于自到至我他她])\d{2}年(?![代多以左半整龄])"
    # The same for two Chinese digits ("一九年到二一年"); "交了三四年" is a duration.
    rf"|(?<![^\s,，。、；;:：!！?？是在从于自到至我他她]){_CN_DIGIT_CLASS_RE}{{2}}年(?![代多以左半整龄])"
)
_DATE_IN_TEXT = (
    re.compile(rf"(?<![\d{_CN_DIGIT_CLASS}十]){_DATE_FORMS[0].pattern}(?!\d)"),
    re.compile(rf"(?<![\d.]){_DATE_FORMS[1].pattern}(?!\d|\.\d)"),
    re.compile(rf"(?<!\d){_DATE_FORMS[2].pattern}(?!\d)"),
    re.compile("|".join(_RELATIVE_DAYS)),
    re.compile(rf"(?<![\d{_CN_DIGIT_CLASS}十年]){_DATE_NO_YEAR.pattern}(?!\d)"),
    _DATE_REL_MONTH,
)


def _small_number(text: str) -> int | None:
    """1-31 written "5", "05", "五", "十五" or "三十一"."""
    if text.isdigit():
        return int(text)
    tens, ten, ones = text.partition("十")
    if not ten:
        return _CN_DIGITS.get(text) if len(text) == 1 else None
    if len(tens) > 1 or len(ones) > 1:
        return None
    high = _CN_DIGITS.get(tens, -100) if tens else 1
    low = _CN_DIGITS.get(ones, -100) if ones else 0
    value = high * 10 + low
    return value if value > 0 else None


def _digits_year(text: str) -> int:
    if text.isdigit():
        return int(text)
    return int("".join(str(_CN_DIGITS[c]) for c in text))


def _two_digit_year(yy: int, today: date) -> int:
    return 2000 + yy if 2000 + yy <= today.year else 1900 + yy


def _year_of(text: str, today: date) -> int:
    if text in _RELATIVE_YEARS:
        return today.year - _RELATIVE_YEARS[text]
    value = _digits_year(text)
    return _two_digit_year(value, today) if len(text) == 2 else value


def _parse_year(text: str, today: date) -> tuple[int | None, str | None]:
    if text in _RELATIVE_YEARS:
        return today.year - _RELATIVE_YEARS[text], None
    m = _YEAR.fullmatch(text) or _YEAR_2.fullmatch(text)
    if m is None:
        return None, messages.YEAR_UNREADABLE
    return _year_of(m.group(1), today), None


def _year_problem(year, today, *, min=None, max=None, not_future=False) -> str | None:
    if not FIRST_YEAR <= year <= LAST_YEAR:
        return messages.YEAR_RANGE.format(min=FIRST_YEAR, max=LAST_YEAR)
    if not_future and year > today.year:
        return messages.YEAR_FUTURE
    return range_error(year, min, max, between=messages.YEAR_RANGE,
                       too_small=messages.YEAR_TOO_EARLY, too_large=messages.YEAR_TOO_LATE)


def check_year(
    raw: str,
    *,
    min: float | None = None,
    max: float | None = None,
    not_future: bool = False,
    today: date | None = None,
    **_: object,
) -> Result:
    """A year; the value is an int."""
    day = resolve_today(today)
    year, error = _parse_year(raw, day)
    if error is None:
        error = _year_problem(year, day, min=min, max=max, not_future=not_future)
    return invalid(error) if error else valid(year)


def extract_year(
    text: str,
    *,
    min: float | None = None,
    max: float | None = None,
    not_future: bool = False,
    today: date | None = None,
    **_: object,
) -> list[Found]:
    """Years written with four digits, as 今年/去年/前年, or as "98年" after a time word."""
    day = resolve_today(today)
    taken = Spans(identifier_spans(text))
    found = []
    for m in _YEAR_IN_TEXT.finditer(text):
        if overlaps(m.start(), m.end(), taken):
            continue
        year, error = _parse_year(m.group(), day)
        if error is None and _year_problem(
            year, day, min=min, max=max, not_future=not_future
        ) is None:
            found.append(Found(year, m.start(), m.end(), m.group()))
    return found


def _parse_date(
    text: str, today: date, not_future: bool = False
) -> tuple[date | None, str | None]:
    if text in _RELATIVE_DAYS:
        return today - timedelta(days=_RELATIVE_DAYS[text]), None
    for form in _DATE_FORMS:
        m = form.fullmatch(text)
        if m is not None:
            year = m.group("y") or m.groupdict().get("ry")
            return _build_date(year, m.group("m"), m.group("d"), today)
    if _DATE_NO_DAY.fullmatch(text):
        return None, messages.DATE_NO_DAY
    m = _DATE_NO_YEAR.fullmatch(text)
    if m is not None:
        return _nearest(m.group("m"), m.group("d"), today, not_future)
    m = _DATE_REL_MONTH.fullmatch(text)
    if m is not None:
        months = today.year * 12 + today.month - 1 + _RELATIVE_MONTHS[m.group("rel")]
        return _build_date(str(months // 12), str(months % 12 + 1), m.group("d"), today)
    return None, messages.DATE_UNREADABLE


def _nearest(m: str, d: str, today: date, not_future: bool) -> tuple[date | None, str | None]:
    """A month and day without a year: the latest past one, or the next one."""
    value, error = _build_date(str(today.year), m, d, today)
    if value is None:
        return value, error
    if not_future and value > today:
        return _build_date(str(today.year - 1), m, d, today)
    if not not_future and value < today:
        return _build_date(str(today.year + 1), m, d, today)
    return value, None


def _build_date(y: str, m: str, d: str, today: date) -> tuple[date | None, str | None]:
    year = _year_of(y, today)
    month = _small_number(m)
    day = _small_number(d)
    if month is None or day is None:
        return None, messages.DATE_UNREADABLE
    if not FIRST_YEAR <= year <= LAST_YEAR:
        return None, messages.DATE_YEAR_RANGE
    if not 1 <= month <= 12:
        return None, messages.DATE_MONTH
    try:
        return date(year, month, day), None
    except ValueError:
        return None, messages.DATE_DAY.format(year=year, month=month, day=day)


DateSpan = Literal["end", "start", "ask"]
DATE_SPAN_CHOICES: tuple[str, ...] = ("end", "start", "ask")


def _span_option(date_span: str | None) -> str:
    if date_span is None:
        return "ask"
    if date_span not in DATE_SPAN_CHOICES:
        raise DefinitionError(f"date_span must be one of {', '.join(DATE_SPAN_CHOICES)}, "
                              f"not {date_span!r}")
    return date_span


def _day_of(
    reading: relative_dates.Reading, today: date, not_future: bool, date_span: str
) -> date | tuple[date, date]:
    """The day a reading stands for, or under "ask" the span still to ask about."""
    first, last = reading.first, reading.last
    if not_future and first <= today < last:
        last = today  # the day cannot be after today, so the span ends there
    if first == last or date_span == "start":
        return first
    if date_span == "end":
        return last
    return first, last


def _span_question(raw: str, first: date, last: date) -> str:
    last_written = f"{last.month}月{last.day}日"
    if last.year != first.year:
        last_written = f"{last.year}年{last_written}"
    return messages.DATE_SPAN_ASK.format(
        raw=raw, first=f"{first.year}年{first.month}月{first.day}日", last=last_written,
        example=f"{last.year}年{last.month}月{last.day}日")


def _read_relative(text: str, today: date) -> tuple[relative_dates.Reading | None, str | None]:
    """The one relative date in an answer, or why there is not one."""
    readings = relative_dates.find(text, today)
    days = [r for r in readings if not r.month_or_year]
    if len({(r.first, r.last) for r in days}) == 1:
        return days[0], None
    if not days and any(r.raw == text for r in readings):
        return None, messages.DATE_NO_DAY  # "去年12月": a month, no day
    return None, messages.DATE_UNREADABLE


def check_date(
    raw: str,
    *,
    not_future: bool = False,
    today: date | None = None,
    date_span: DateSpan | None = None,
    **_: object,
) -> Result:
    """A calendar date; the value is its ISO form "YYYY-MM-DD"."""
    day = resolve_today(today)
    span_option = _span_option(date_span)
    value, error = _parse_date(raw, day, not_future)
    if error == messages.DATE_UNREADABLE:
        reading, error = _read_relative(raw, day)
        if reading is not None:
            value = _day_of(reading, day, not_future, span_option)
            if isinstance(value, tuple):
                first, last = value
                error = (messages.DATE_FUTURE if not_future and first > day
                         else _span_question(reading.raw, first, last))
    if error is None and not_future and value > day:
        error = messages.DATE_FUTURE
    return invalid(error) if error else valid(value.isoformat())


def extract_date(
    text: str,
    *,
    not_future: bool = False,
    today: date | None = None,
    date_span: DateSpan | None = None,
    **_: object,
) -> list[Found]:
    """Complete dates (year, month and day), 今天/昨天/前天, and relative dates.

    A span found under ``date_span="ask"`` has the value None.
    """
    day = resolve_today(today)
    span_option = _span_option(date_span)
    taken = Spans(identifier_spans(text))
    candidates = []
    for pattern in _DATE_IN_TEXT:
        for m in pattern.finditer(text):
            if overlaps(m.start(), m.end(), taken):
                continue
            value, error = _parse_date(m.group(), day, not_future)
            if error is None and not (not_future and value > day):
                candidates.append(Found(value.isoformat(), m.start(), m.end(), m.group()))
    for reading in relative_dates.find(text, day):
        if reading.month_or_year or overlaps(reading.start, reading.end, taken):
            continue
        value = _day_of(reading, day, not_future, span_option)
        first = value[0] if isinstance(value, tuple) else value
        if not_future and first > day:
            continue
        shown = None if isinstance(value, tuple) else value.isoformat()
        candidates.append(Found(shown, reading.start, reading.end, reading.raw))
    return longest_first(candidates)
