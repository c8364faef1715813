"""Free text, optionally constrained by a regular expression.

``min_length``/``max_length`` (defaults 1 and 200) count characters after
stripping; ``pattern`` must match the whole answer. ``extract`` needs a
pattern: it finds its matches in the sentence (a leading ``^`` and a trailing
``$`` are dropped for the search).
"""

from __future__ import annotations

import re
from functools import lru_cache

from . import messages
from .base import Found, Result, invalid, valid

DEFAULT_MIN = 1
DEFAULT_MAX = 200


@lru_cache(maxsize=256)
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def _variants(text: str) -> tuple[str, ...]:
    """The text as typed, without spaces, and upper-cased: codes are often typed
    as "si 2026 1130 000042"."""
    compact = re.sub(r"\s+", "", text)
    return tuple(dict.fromkeys((text, compact, compact.upper())))


def _matching(text: str, pattern: str) -> str | None:
    compiled = _compiled(pattern)
    return next((v for v in _variants(text) if compiled.fullmatch(v)), None)


@lru_cache(maxsize=256)
def _unanchored(pattern: str) -> re.Pattern[str]:
    if pattern.startswith("^"):
        pattern = pattern[1:]
    elif pattern.startswith(r"\A"):
        pattern = pattern[2:]
    if pattern.endswith(r"\Z"):
        pattern = pattern[:-2]
    elif pattern.endswith("$") and not pattern.endswith(r"\$"):
        pattern = pattern[:-1]
    return re.compile(pattern, re.IGNORECASE)


def _problem(text: str, pattern: str | None, low: int, high: int) -> str | None:
    if len(text) < low:
        return messages.EMPTY if not text else messages.TEXT_TOO_SHORT.format(n=low)
    if len(text) > high:
        return messages.TEXT_TOO_LONG.format(n=high)
    if pattern is not None and _matching(text, pattern) is None:
        return messages.TEXT_PATTERN
    return None


def check(
    raw: str,
    *,
    pattern: str | None = None,
    min_length: int | None = None,
    max_length: int | None = None,
    **_: object,
) -> Result:
    """Any text within the length bounds that fully matches ``pattern``."""
    low = DEFAULT_MIN if min_length is None else min_length
    high = DEFAULT_MAX if max_length is None else max_length
    error = _problem(raw, pattern, low, high)
    if error:
        return invalid(error)
    return valid(_matching(raw, pattern) if pattern is not None else raw)


def extract(
    text: str,
    *,
    pattern: str | None = None,
    min_length: int | None = None,
    max_length: int | None = None,
    **_: object,
) -> list[Found]:
    """Matches of ``pattern`` in the sentence; nothing without a pattern."""
    if not pattern:
        return []
    low = DEFAULT_MIN if min_length is None else min_length
    high = DEFAULT_MAX if max_length is None else max_length
    found = []
    for m in _unanchored(pattern).finditer(text):
        value = _matching(m.group(), pattern)
        if value is not None and low <= len(m.group()) <= high:
            found.append(Found(value, m.start(), m.end(), m.group()))
    return found
