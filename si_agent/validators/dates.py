"""Years and calendar dates.

``year`` takes "2019", "2019年", "二〇一九年", "今年"/"去年"/"前年", and a
two-digit "19年" or "98年". A two-digit year is read as the latest year not
after today: with today in 2025, "19年" is 2019 and "98年" is 1998. Without
"年", two digits are not a year.

``date`` takes 2024-03-05, 2024/3/5, 2024.3.5, 20240305, 2024年3月5日 (or 号),
二〇二四年三月五日, 今天/昨天/前天, 去年6月30号, 上个月15号, and a date without a
year ("6月30号"): with ``not_future`` the latest such day not after today, else
the next such day from today. Its value is the ISO string "2024-03-05".

``today`` (a ``datetime.date``) anchors the relative words, the two-digit
years and ``not_future``; it defaults to the real date.
"""

from __future__ import annotations

import re
from datetime import date, timedelta

from . import messages
from .base import Found, Result, invalid, longest_first, overlaps, range_error, resolve_today, valid
from .identifiers import identifier_spans

FIRST_YEAR = 1900
LAST_YEAR = 2100

_CN_DIGITS = {c: i for i, c in enumerate("〇一二三四五六七八九")} | {"零": 0}
_CN_DIGIT_CLASS = "〇零一二三四五六七八九"

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
    # Two digits before 年 are a year only after a word that introduces a
    # time ("从15年", "我98年"), not after 交了/缴费 where "15年" is a duration.
    r"|(?<![^\s,，。、；;:：!！?？是在从于自到至我他她])\d{2}年(?![代多以左半整龄])"
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
    taken = identifier_spans(text)
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


def check_date(
    raw: str, *, not_future: bool = False, today: date | None = None, **_: object
) -> Result:
    """A calendar date; the value is its ISO form "YYYY-MM-DD"."""
    day = resolve_today(today)
    value, error = _parse_date(raw, day, not_future)
    if error is None and not_future and value > day:
        error = messages.DATE_FUTURE
    return invalid(error) if error else valid(value.isoformat())


def extract_date(
    text: str, *, not_future: bool = False, today: date | None = None, **_: object
) -> list[Found]:
    """Complete dates (year, month and day) and 今天/昨天/前天."""
    day = resolve_today(today)
    taken = identifier_spans(text)
    candidates = []
    for pattern in _DATE_IN_TEXT:
        for m in pattern.finditer(text):
            if overlaps(m.start(), m.end(), taken):
                continue
            value, error = _parse_date(m.group(), day, not_future)
            if error is None and not (not_future and value > day):
                candidates.append(Found(value.isoformat(), m.start(), m.end(), m.group()))
    return longest_first(candidates)
