"""Free text, optionally constrained by a regular expression.

Free text goes on to the backend, the staff screens and the logs, so characters
that show something other than what is stored are dealt with first (``clean``):

- direction controls (U+202A-U+202E, U+2066-U+2069, U+200E, U+200F, U+061C)
  can make "号001路三文" read "文三路100号": the answer is refused
  (``messages.TEXT_BIDI``);
- control characters (NUL, ESC and the rest of C0 and C1, DEL), lone
  surrogates and tag characters (invisible ASCII) are refused
  (``messages.TEXT_CONTROL``);
- other invisible format characters (zero-width space and joiners, word
  joiner, BOM, soft hyphen), which copied text often carries, are dropped;
- line breaks (CR LF, CR, LF, NEL, U+2028, U+2029) become a space, or "\n"
  with the ``multiline`` option (no business YAML key sets it yet); tabs,
  VT and FF become a space.

``min_length``/``max_length`` (defaults 1 and 200) count characters after
cleaning and stripping; ``pattern`` must match the whole cleaned answer.
``extract`` needs a pattern: it finds its matches in the sentence (a leading
``^`` and a trailing ``$`` are dropped for the search), skips a match holding a
refused character and gives the cleaned match as the value.

Patterns are staff's (business YAML), so they run on the ``regex`` module with a
time limit (``PATTERN_SECONDS``, 1 s): a pattern that backtracks catastrophically on what
a citizen typed ("(a|aa)+$") counts as not matching, and the log names it, instead
of holding a worker for ever. ``si-agent validate`` tries each pattern on such input
(``slow_pattern``) and refuses one that runs out of time.
"""

from __future__ import annotations

import logging
import re
import unicodedata
from functools import lru_cache

import regex

from . import messages
from .base import Found, Result, invalid, valid

DEFAULT_MIN = 1
DEFAULT_MAX = 200
# Per match of a staff pattern (wall clock: generous, so a busy machine never refuses a
# good answer); a normal one takes microseconds. validate's probes are stricter.
PATTERN_SECONDS = 1.0
PROBE_SECONDS = 0.2
# What validate tries a pattern on: runs of one character class, then one that breaks
# the run (the shape that makes nested quantifiers backtrack).
_PROBES = tuple(c * 40 + end for c in ("a", "1", "中", " ", "a1") for end in ("!", "\n", ""))

log = logging.getLogger(__name__)

_LINE_BREAK = re.compile("\r\n|[\n\r\x85\u2028\u2029]")
_DIRECTION = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e"
                       "\u2066\u2067\u2068\u2069")
_SPACE_LIKE = frozenset("\t\x0b\x0c")
_TAGS = range(0xE0000, 0xE0080)


def clean(text: str, *, multiline: bool = False) -> tuple[str, str | None]:
    """``text`` ready to keep (see the module docstring), and None; or "" and the
    Chinese diagnosis of a character that is refused."""
    if text.isprintable():  # the common case, at C speed
        return text, None
    text = _LINE_BREAK.sub("\n" if multiline else " ", text)
    kept: list[str] = []
    for char in text:
        if char.isprintable() or char == "\n":
            kept.append(char)
        elif char in _DIRECTION:
            return "", messages.TEXT_BIDI
        elif char in _SPACE_LIKE:
            kept.append(" ")
        else:
            category = unicodedata.category(char)
            if category in ("Cc", "Cs") or ord(char) in _TAGS:
                return "", messages.TEXT_CONTROL
            if category != "Cf":  # spaces, private use, unassigned: kept as typed
                kept.append(char)
    return "".join(kept).strip(), None


@lru_cache(maxsize=256)
def _compiled(pattern: str) -> regex.Pattern[str]:
    return regex.compile(pattern)


def _timed_out(pattern: str, text: str) -> None:
    log.warning("a field's pattern %r ran out of its %.1f s on a %d-character answer: "
                "taken as not matching; rewrite it without nested repetition "
                "(si-agent validate reports it)", pattern, PATTERN_SECONDS, len(text))


def slow_pattern(pattern: str) -> str | None:
    """A probe on which ``pattern`` runs out of time (catastrophic backtracking), if any."""
    compiled = _compiled(pattern)
    for probe in _PROBES:
        for method in (compiled.fullmatch, compiled.search):
            try:
                method(probe, timeout=PROBE_SECONDS)
            except TimeoutError:
                return probe
    return None


def _variants(text: str) -> tuple[str, ...]:
    """The text as typed, without spaces, and upper-cased: codes are often typed
    as "si 2026 1130 000042"."""
    compact = re.sub(r"\s+", "", text)
    return tuple(dict.fromkeys((text, compact, compact.upper())))


def _matching(text: str, pattern: str) -> str | None:
    compiled = _compiled(pattern)
    try:
        return next((v for v in _variants(text)
                     if compiled.fullmatch(v, timeout=PATTERN_SECONDS)), None)
    except TimeoutError:
        _timed_out(pattern, text)
        return None


@lru_cache(maxsize=256)
def _unanchored(pattern: str) -> regex.Pattern[str]:
    if pattern.startswith("^"):
        pattern = pattern[1:]
    elif pattern.startswith(r"\A"):
        pattern = pattern[2:]
    if pattern.endswith(r"\Z"):
        pattern = pattern[:-2]
    elif pattern.endswith("$") and not pattern.endswith(r"\$"):
        pattern = pattern[:-1]
    return regex.compile(pattern, regex.IGNORECASE)


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
    multiline: bool = False,
    **_: object,
) -> Result:
    """Any clean text within the length bounds that fully matches ``pattern``;
    ``multiline`` keeps line breaks."""
    low = DEFAULT_MIN if min_length is None else min_length
    high = DEFAULT_MAX if max_length is None else max_length
    text, error = clean(raw, multiline=multiline)
    error = error or _problem(text, pattern, low, high)
    if error:
        return invalid(error)
    return valid(_matching(text, pattern) if pattern is not None else text)


def extract(
    text: str,
    *,
    pattern: str | None = None,
    min_length: int | None = None,
    max_length: int | None = None,
    multiline: bool = False,
    **_: object,
) -> list[Found]:
    """Clean matches of ``pattern`` in the sentence; nothing without a pattern."""
    if not pattern:
        return []
    low = DEFAULT_MIN if min_length is None else min_length
    high = DEFAULT_MAX if max_length is None else max_length
    found = []
    try:
        for m in _unanchored(pattern).finditer(text, timeout=PATTERN_SECONDS):
            cleaned, error = clean(m.group(), multiline=multiline)
            value = None if error else _matching(cleaned, pattern)
            if value is not None and low <= len(cleaned) <= high:
                found.append(Found(value, m.start(), m.end(), m.group()))
    except TimeoutError:
        _timed_out(pattern, text)
    return found
