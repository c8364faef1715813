"""Amounts read into ranges (bucket fields): "不到十万" → 10万以下, "年薪15万" → 10-20万.

``buckets`` is a list of ``(value, below)`` pairs in increasing order: an amount
falls in the first range it stays under; the last range has ``below=None``. A
range's own value is accepted as written ("10-20万"). Otherwise the amount is
read with its hedges: "不到/以下/低于/不足" put it just under the number, a span
"15到25万" counts as its middle, a monthly amount ("月薪8000", "一个月也就七千",
"九千二百块一个月") is made yearly.
An amount under 1,000 without a unit is refused: "收入15" does not say 15 what.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from decimal import Decimal

from . import messages
from .base import Found, Result, invalid, valid
from .numbers import ROUGH, extract_number
from .numbers import rough as rough_amount

_BELOW = re.compile(r"(?:不到|不足|低于|少于|没有|没到|不超过)\s*$")
_BELOW_AFTER = re.compile(r"\s*(?:(?:元|块)\s*)?(?:以下|不到|以内|之内)")  # one \\s* at a time: linear
_LOOK_BEHIND = 4
_CURRENCY = re.compile(r"\s*(?:元|块)")
_MONTHLY_WORDS = r"(?:月薪|每月|一个月|月收入|每个月|月入|一月)"
# "一个月也就七千来块": a few words of how much may stand between the month and the amount.
_MONTHLY = re.compile(rf"{_MONTHLY_WORDS}\s*(?:也就|也就是|就|才|大概|差不多|能有|有|能挣|挣|赚|能赚"
                      r"|到手|拿)?\s*$")
_MONTHLY_AFTER = re.compile(rf"\s*(?:元|块钱|块)?\s*{_MONTHLY_WORDS}")  # "九千二百块一个月"
_MONTHLY_BEHIND = 10
_SPAN_WORDS = frozenset({"到", "至", "-", "~", "～", "—"})
_BARE_MIN = 1000
_MULTIPLIERS = frozenset("百千万亿kKwW")


def _frozen(buckets: Iterable | None) -> tuple[tuple[str, float | None], ...]:
    if not buckets:
        raise ValueError("a bucket field needs buckets: a list of (value, below)")
    return tuple((b.value, b.below) if hasattr(b, "value") else (b[0], b[1]) for b in buckets)


def _bucket(amount: float, buckets: tuple[tuple[str, float | None], ...]) -> str:
    for value, below in buckets:
        if below is None or amount < below:
            return value
    return buckets[-1][0]


def _amounts(text: str) -> list[tuple[float, int, int]]:
    """Amounts in ``text`` with their hedges applied: (amount, start, end); the span
    takes in the hedges and a "月薪" just before, so checking it gives the same range."""
    found = extract_number(text)
    out: list[tuple[float, int, int]] = []
    i = 0
    while i < len(found):
        f = found[i]
        amount, start, end = Decimal(str(f.value)), f.start, f.end
        multiplied = any(c in _MULTIPLIERS for c in f.raw)
        nxt = found[i + 1] if i + 1 < len(found) else None
        if nxt is not None and text[f.end:nxt.start].strip() in _SPAN_WORDS:
            # "15到25万": the unit of the second number is the first's too.
            high = Decimal(str(nxt.value))
            if not multiplied and "万" in nxt.raw and amount * 10_000 <= high * 10:
                amount *= 10_000  # not "8000到1万": 8000 is already in yuan
            # A span is an amount in money only with a unit ("15到25万", "8000到1万"):
            # "0-一岁" is none.
            multiplied = multiplied or any(c in _MULTIPLIERS for c in nxt.raw)
            amount, end = (amount + high) / 2, nxt.end
            i += 1
        i += 1
        currency = _CURRENCY.match(text, end)
        if not multiplied and amount < _BARE_MIN:
            if currency is None:
                continue  # "收入15": 15 what?
            end = currency.end()
        before = text[max(0, start - _MONTHLY_BEHIND):start]
        monthly = _MONTHLY.search(before)
        monthly_after = None if monthly else _MONTHLY_AFTER.match(text, end)
        if monthly or monthly_after:
            amount *= 12
        if monthly:
            start -= len(before) - monthly.start()
        elif monthly_after:
            end = monthly_after.end()
        below = _BELOW.search(text[max(0, start - _LOOK_BEHIND):start])
        after = _BELOW_AFTER.match(text, end)
        if below or after:
            amount -= Decimal("0.01")
            start -= len(below.group()) if below else 0
            end = after.end() if after else end
        out.append((float(amount), start, end))
    return out


_BARE_MILLION = re.compile(r"(?<![0-9零〇一二两三四五六七八九十])百万")


def rough(text: str) -> str:
    """Rough amounts in words rewritten as digits ("七八万" → "7.5万", "十几万" → "15万",
    "百万" → "100万"), as ``numbers.rough`` reads them."""
    def digits(m: re.Match[str]) -> str:
        said = rough_amount(m)
        return m[0] if said is None else f"{float(said[0]):g}{said[1]}"

    return _BARE_MILLION.sub("100万", ROUGH.sub(digits, text))


def check(raw: str, *, buckets: Iterable | None = None, **_: object) -> Result:
    """The range ``raw`` names or its amount falls in; the value is the range's value."""
    table = _frozen(buckets)
    text = rough(re.sub(r"\s+", "", raw))
    for value, _below in table:
        if text == re.sub(r"\s+", "", value):
            return valid(value)
    amounts = _amounts(text)
    if not amounts:
        return invalid(messages.BUCKET_UNREADABLE.format(
            options="、".join(value for value, _ in table)))
    return valid(_bucket(amounts[0][0], table))


def extract(text: str, *, buckets: Iterable | None = None, **_: object) -> list[Found]:
    """Every range named or amount stated in a sentence, as its range."""
    table = _frozen(buckets)
    found = []
    for value, _below in table:
        at = text.find(value)
        if at >= 0:
            found.append(Found(value, at, at + len(value), value))
    for amount, start, end in _amounts(text):
        if not any(f.start < end and start < f.end for f in found):
            found.append(Found(_bucket(amount, table), start, end, text[start:end]))
    return sorted(found, key=lambda f: f.start)
