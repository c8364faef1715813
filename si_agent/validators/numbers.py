"""Integers and numbers: "12,000", "1.2万", "3千", "5k", "三十五", "两千五百".

A trailing unit of measure (元, 块, 岁, 年, 个月, ...) and a leading "大约" or
"一共" are ignored; a number with a unit of something else ("30公斤", "12百万像素",
"90平米") is no value, in a whole answer or in a sentence. Chinese numerals go through ``cn2an`` (imported on first
use: it takes ~80 ms to import). ``integer`` gives an ``int`` and refuses a
fraction; ``number`` always gives a ``float``. ``min``/``max`` are inclusive.

Chinese digits read one by one without 十/百/千/万/亿 ("五六", "一两") mean a
rough range or a code, not a quantity, and are refused. A rough amount with its
multiplier is read as the middle of what it says (``rough``): "七八万" 75000,
"二三十万" 250000, "十几万" 150000, "二十多万" 250000, "三十来万" 300000, "十五六万"
155000, never
the 20 of "二十多万"; a longer numeral before 多 and its multiplier counts at
least the numeral ("一百二十多万" 1200000).
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from functools import lru_cache

from . import messages
from .base import Found, Result, Spans, invalid, overlaps, range_error, valid
from .dates import extract_date
from .identifiers import identifier_spans

_CN_NUMERALS = "零〇一二两三四五六七八九十百千万亿"
_CN_UNITS = frozenset("十百千万亿")
_MULTIPLIERS = {
    "百": 100, "千": 1000, "k": 1000, "K": 1000,
    "万": 10_000, "w": 10_000, "W": 10_000, "百万": 10**6, "千万": 10**7, "亿": 10**8,
    "万亿": 10**12,
}

_HEDGE = re.compile(r"(?:大约|大概|差不多|一共|总共|共|约)\s*")
_UNIT = re.compile(r"\s*(?:元钱|块钱|元|块|周岁|岁|个月|月|年|天|个|人|次)$")
_ARABIC = re.compile(
    r"([+-]?)(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d+))?\s*(万亿|亿|千万|百万|万|千|百|[kKwW])?"
)
_CHINESE = re.compile(rf"负?[{_CN_NUMERALS}\d.]*[{_CN_NUMERALS}][{_CN_NUMERALS}\d.点]*")

# In a sentence: Arabic numbers with an optional multiplier ("1.2万", "1万5千",
# "5k") but not touching Latin letters (codes like "B204"), and runs of Chinese
# numerals.
_ARABIC_IN_TEXT = re.compile(
    # (no digit after a part: "5000m" is not 500 with a 0m after it)
    r"(?:(?<![\d.A-Za-z-])-)?(?<![\d.A-Za-z])(?:\d{1,3}(?:,\d{3})+(?!\d)|\d+(?!\d))"
    r"(?:\.\d+(?!\d)|(?!\.\d))"
    r"(?:万\d千?(?![\d.])|千\d百?(?![\d.])|万亿|亿|千万|百万|万|千|百|[kKwW](?![A-Za-z]))?"
    r"(?![A-Za-z])"
)
_CHINESE_IN_TEXT = re.compile(
    rf"(?<![{_CN_NUMERALS}])[{_CN_NUMERALS}]+(?:点[零〇一二三四五六七八九]+)?"
)
# A lone Chinese numeral ("一", "十") counts only when a unit follows it:
# "一个月" is a number, "一下" and "统一" are not.
_UNIT_AFTER = re.compile(r"元|块|岁|周岁|年|个|月|天|日|人|次|周|倍|份|项|期|级|档|%")
_LONG_DIGITS = re.compile(r"\d{11,}")
# Units of what no field here counts (weight, length, area, volume, pixels, bytes, rooms):
# "12百万像素", "30公斤", "90平米" are no amount of money, no age and no number of years.
_OTHER_UNIT = re.compile(
    r"\s*(?:多|来|余|几)?(像素|公斤|千克|斤|克|吨|公里|千米|厘米|毫米|米|平方米|平方|平米|亩|"
    r"毫升|升|瓦|伏|赫兹|毫安|寸|码|层楼|楼|层|室|厅|卡路里|(?:[GgMmKkTt][Bb]?|Hz|mAh)"
    r"(?![A-Za-z]))")
_DIGIT_VALUES = {c: i for i, c in enumerate("零一二三四五六七八九")} | {"两": 2}
ROUGH = re.compile(
    r"(?<![零〇一二两三四五六七八九十百千万])"
    r"(?:([一二两三四五六七八])([二三四五六七八九])(十)?|([一二两三四五六七八九]?)十(几|多|来)"
    r"|([一二两三四五六七八九]?)十([一二三四五六七八])([二三四五六七八九]))"
    r"([百千万])"
)


# "一百二十多万": a numeral, "more", then its multiplier; read as the numeral times it.
_SOME_MORE = re.compile(rf"([{_CN_NUMERALS}]+)(?:多|来|几|余)([百千万亿])")


def rough(m: re.Match[str]) -> tuple[Decimal, str] | None:
    """A rough amount matched by ``ROUGH`` as (how many, multiplier): "七八万" is
    (7.5, 万), "二十多万" (25, 万), "三十来万" (30, 万), "十五六万" (15.5, 万); None for
    "三五万"."""
    low, high, tens, ten_digit, some, tens_of, low_unit, high_unit, unit = m.groups()
    if low_unit is not None:  # "十五六万", "二十七八万": a ten, then two neighbouring units
        between = _between(low_unit, high_unit)
        return None if between is None else (
            (_DIGIT_VALUES[tens_of] if tens_of else 1) * 10 + between, unit)
    if low is not None:
        between = _between(low, high)
        return None if between is None else (between * (10 if tens else 1), unit)
    base = (_DIGIT_VALUES[ten_digit] if ten_digit else 1) * 10
    return Decimal(base + (0 if some == "来" else 5)), unit


def _between(low: str, high: str) -> Decimal | None:
    """The middle of two neighbouring digits ("七八" 7.5); None for others ("三五")."""
    a, b = _DIGIT_VALUES[low], _DIGIT_VALUES[high]
    return Decimal(a + b) / 2 if b == a + 1 else None


def _rough_value(m: re.Match[str]) -> Decimal | None:
    said = rough(m)
    return None if said is None else said[0] * _MULTIPLIERS[said[1]]


@lru_cache(maxsize=1024)  # a long message repeats its numbers; a Decimal is immutable
def parse(text: str) -> Decimal | None:
    """The number written in ``text`` (without hedges or units), or None."""
    m = _ARABIC.fullmatch(text)
    if m is not None:
        sign, whole, fraction, multiplier = m.groups()
        value = Decimal(whole.replace(",", "") + ("." + fraction if fraction else ""))
        if multiplier:
            value *= _MULTIPLIERS[multiplier]
        return -value if sign == "-" else value
    m = ROUGH.fullmatch(text)
    if m is not None:
        return _rough_value(m)
    m = _SOME_MORE.fullmatch(text)
    if m is not None:
        base = parse(m[1])
        return None if base is None else base * _MULTIPLIERS[m[2]]
    if _CHINESE.fullmatch(text) and not _is_digit_string(text):
        return _parse_chinese(text.replace("俩", "两"))
    return None


def _is_digit_string(text: str) -> bool:
    """Chinese digits read one by one ("五六"), with no 十/百/千/万/亿."""
    digits = [c for c in text if c in _CN_NUMERALS]
    return len(digits) > 1 and not any(c in _CN_UNITS for c in text) and "点" not in text


def _parse_chinese(text: str) -> Decimal | None:
    import cn2an  # ~80 ms to import; only needed for Chinese numerals

    try:
        value = cn2an.cn2an(text, "smart")
    except (ValueError, KeyError, IndexError, TypeError):
        # cn2an reports malformed numerals ("万十一") with assorted exception types.
        return None
    try:
        return Decimal(str(value))
    except InvalidOperation:
        return None


def _strip(raw: str) -> str:
    text = _HEDGE.sub("", raw, count=1) if raw[:1] in "大差一总共约" else raw
    return _UNIT.sub("", text)


def _judge(
    value: Decimal, integral: bool, low: float | None, high: float | None
) -> tuple[int | float | None, str | None]:
    if integral:
        if value != value.to_integral_value():
            return None, messages.NUMBER_NOT_INTEGER
        result: int | float = int(value)
    else:
        result = float(value)
    error = range_error(value, low, high, between=messages.NUMBER_RANGE,
                        too_small=messages.NUMBER_TOO_SMALL,
                        too_large=messages.NUMBER_TOO_LARGE)
    return (None, error) if error else (result, None)


def _check(raw: str, integral: bool, low: float | None, high: float | None) -> Result:
    value = parse(_strip(raw))
    if value is None:
        unit = _other_unit(raw.strip())
        if unit is not None:
            return invalid(messages.NUMBER_OTHER_UNIT.format(unit=unit))
        return invalid(messages.NUMBER_UNREADABLE)
    result, error = _judge(value, integral, low, high)
    return invalid(error) if error else valid(result)


def _other_unit(text: str) -> str | None:
    """The unit of "30公斤", "12百万像素" (a number, then a unit no field counts)."""
    for at in range(1, len(text)):
        m = _OTHER_UNIT.match(text, at)
        if m is not None and parse(_strip(text[:at])) is not None:
            return m.group(1)
    return None


def check_integer(
    raw: str, *, min: float | None = None, max: float | None = None, **_: object
) -> Result:
    """A whole number; the value is an int."""
    return _check(raw, True, min, max)


def check_number(
    raw: str, *, min: float | None = None, max: float | None = None, **_: object
) -> Result:
    """Any number; the value is a float."""
    return _check(raw, False, min, max)


def _extract(text: str, integral: bool, low: float | None, high: float | None) -> list[Found]:
    taken = Spans(identifier_spans(text))
    for f in extract_date(text):
        taken.add(f.start, f.end)
    for m in _LONG_DIGITS.finditer(text):
        taken.add(*m.span())
    # A rough amount first: "二十多万" is 250000, not the 20 before 多.
    candidates = [*ROUGH.finditer(text), *_SOME_MORE.finditer(text),
                  *_ARABIC_IN_TEXT.finditer(text)]
    for m in _CHINESE_IN_TEXT.finditer(text):
        run = m.group()
        if len(run) > 1 or _UNIT_AFTER.match(text, m.end()):
            candidates.append(m)
    found: list[Found] = []
    for m in sorted(candidates, key=lambda m: (m.start(), -len(m.group()))):
        if overlaps(m.start(), m.end(), taken):
            continue
        if found and m.start() < found[-1].end:
            continue  # "0万" and "万万一" in "0万万一": the first reading wins
        if _OTHER_UNIT.match(text, m.end()):
            continue  # "30公斤", "12百万像素": it counts something else
        value = parse(m.group())
        if value is None:
            continue
        result, error = _judge(value, integral, low, high)
        if error is None:
            found.append(Found(result, m.start(), m.end(), m.group()))
    return found


def extract_integer(
    text: str, *, min: float | None = None, max: float | None = None, **_: object
) -> list[Found]:
    """Whole numbers in a sentence: "我60岁退休，交了25年" gives 60 and 25."""
    return _extract(text, True, min, max)


def extract_number(
    text: str, *, min: float | None = None, max: float | None = None, **_: object
) -> list[Found]:
    """Numbers in a sentence, as floats."""
    return _extract(text, False, min, max)
