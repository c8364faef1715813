"""What every validator returns, and the helpers they share.

A field type is a :class:`Validator`: a ``check`` that judges a whole answer and
an ``extract`` that finds every valid value of the type inside a sentence. Both
take the same keyword options and ignore the ones they do not use. The table
of types lives in ``si_agent/validators/__init__.py``.

Input is normalised before it reaches a type module: ``check`` gets the answer
NFKC-normalised (full-width digits and letters become ASCII) and stripped;
``extract`` gets the sentence folded character by character with
:func:`fold_width`, which keeps its length so that spans point into the
original text.
"""

from __future__ import annotations

import unicodedata
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal
from functools import lru_cache
from typing import Any


@dataclass(frozen=True)
class Result:
    """The verdict on one answer: the normalised value, or a Chinese diagnosis."""

    ok: bool
    value: Any = None
    error: str | None = None


@dataclass(frozen=True)
class Found:
    """A valid value found in a sentence, at ``text[start:end] == raw``."""

    value: Any
    start: int
    end: int
    raw: str


@dataclass(frozen=True)
class Validator:
    """One field type: judge a whole answer, find values in a sentence."""

    check: Callable[..., Result]
    extract: Callable[..., list[Found]]


def valid(value: Any) -> Result:
    return Result(True, value)


def invalid(error: str) -> Result:
    return Result(False, None, error)


def normalize(raw: str) -> str:
    """NFKC-normalise and strip an answer (full-width "１３８" becomes "138")."""
    if raw.isascii():
        return raw.strip()
    return unicodedata.normalize("NFKC", raw).strip()


@lru_cache(maxsize=4096)
def _fold_char(char: str) -> str:
    # The full-width comma stays: in Chinese text it separates clauses, and
    # turned into "," it would glue "300，200" into one number.
    if char == "\uff0c":
        return char
    folded = unicodedata.normalize("NFKC", char)
    return folded if len(folded) == 1 else char


def fold_width(text: str) -> str:
    """``text`` NFKC-folded one character at a time, keeping its length."""
    if text.isascii():
        return text
    return "".join(map(_fold_char, text))


def resolve_today(today: date | None) -> date:
    """The ``today`` option, defaulting to the real date."""
    if today is None:
        return date.today()
    if isinstance(today, datetime):
        return today.date()
    return today


def format_bound(bound: float | int) -> str:
    """A bound as a citizen writes it: 60.0 -> "60", 0.6 -> "0.6"."""
    if isinstance(bound, float) and bound.is_integer():
        return str(int(bound))
    return str(bound)


def range_error(
    value: float | int | Decimal,
    low: float | int | None,
    high: float | int | None,
    *,
    between: str,
    too_small: str,
    too_large: str,
) -> str | None:
    """The diagnosis for ``value`` outside the inclusive ``[low, high]``, if any."""
    if (low is None or value >= low) and (high is None or value <= high):
        return None
    bounds = {"min": format_bound(low) if low is not None else "",
              "max": format_bound(high) if high is not None else ""}
    if low is not None and high is not None:
        return between.format(**bounds)
    return (too_small if low is not None else too_large).format(**bounds)


def overlaps(start: int, end: int, spans: Iterable[tuple[int, int]]) -> bool:
    """Whether ``[start, end)`` shares a character with one of ``spans``."""
    if isinstance(spans, Spans):
        return spans.overlaps(start, end)
    return any(start < e and s < end for s, e in spans)


class Spans:
    """Spans of a text taken by something, asked "does this one overlap?" in O(log n).

    Overlapping spans are kept merged, so the stored ones are disjoint and sorted:
    a sentence with a thousand candidates costs n log n, not n².
    """

    def __init__(self, spans: Iterable[tuple[int, int]] = ()) -> None:
        self._starts: list[int] = []
        self._ends: list[int] = []
        for start, end in spans:
            self.add(start, end)

    def __len__(self) -> int:
        return len(self._starts)

    def overlaps(self, start: int, end: int) -> bool:
        i = bisect_left(self._starts, end) - 1  # the last span starting before ``end``
        return i >= 0 and self._ends[i] > start

    def add(self, start: int, end: int) -> None:
        if start >= end:
            return
        first = bisect_right(self._ends, start)  # spans ending after ``start``...
        last = bisect_left(self._starts, end)  # ...and starting before ``end`` overlap it
        if first < last:
            start = min(start, self._starts[first])
            end = max(end, self._ends[last - 1])
        self._starts[first:last] = [start]
        self._ends[first:last] = [end]


def longest_first(candidates: Iterable[Found]) -> list[Found]:
    """Non-overlapping candidates, longer ones winning, returned in text order."""
    kept: list[Found] = []
    taken = Spans()
    for c in sorted(candidates, key=lambda f: (f.start - f.end, f.start)):
        if not taken.overlaps(c.start, c.end):
            kept.append(c)
            taken.add(c.start, c.end)
    return sorted(kept, key=lambda f: f.start)
