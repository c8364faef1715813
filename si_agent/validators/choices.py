"""Choices from a fixed list (enum fields).

``options`` is a list of ``(value, aliases)`` pairs (a bare string is a value
without aliases). An answer is matched, case-insensitively, in this order:

1. it equals a value or an alias;
2. it contains values/aliases of exactly one option ("我要办临时挂失"), a
   match inside a longer match of another option not counting (in "中国银行",
   "银行" belongs to "中国银行");
3. it is part of exactly one option's value or alias ("临时" -> "临时挂失"),
   or its characters appear in that order in exactly one ("正挂" -> "正式挂失").

Anything else is refused with the list of options; an answer that fits several
lists just those.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from . import messages
from .base import Found, Result, invalid, longest_first, valid


@dataclass(frozen=True)
class _Options:
    values: tuple[str, ...]
    # Folded value or alias -> canonical value, longest first.
    keys: tuple[tuple[str, str], ...]

    def exact(self, text: str) -> str | None:
        for key, value in self.keys:
            if key == text:
                return value
        return None


def _fold(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold().strip()


def _fold_keep_length(text: str) -> str:
    """``text`` case-folded where that keeps one character per character."""
    return "".join(f if len(f := c.casefold()) == 1 else c for c in text)


def _freeze(options: Iterable) -> tuple[tuple[str, tuple[str, ...]], ...]:
    frozen = []
    for option in options:
        if isinstance(option, str):
            frozen.append((option, ()))
        elif hasattr(option, "value"):
            frozen.append((option.value, tuple(getattr(option, "aliases", ()))))
        else:
            value, aliases = option
            frozen.append((value, tuple(aliases)))
    return tuple(frozen)


@lru_cache(maxsize=512)
def _index(options: tuple[tuple[str, tuple[str, ...]], ...]) -> _Options:
    keys: dict[str, str] = {}
    for value, aliases in options:
        for key in (value, *aliases):
            folded = _fold(key)
            if folded:
                keys.setdefault(folded, value)
    ordered = tuple(sorted(keys.items(), key=lambda kv: -len(kv[0])))
    return _Options(tuple(value for value, _ in options), ordered)


def _options(options: Iterable | None) -> _Options:
    if not options:
        raise ValueError("an enum field needs options: a list of (value, aliases)")
    return _index(_freeze(options))


def _occurrences(text: str, opts: _Options) -> list[tuple[int, int, str]]:
    """Every place a value or alias occurs in ``text``: (start, end, value)."""
    spans = []
    for key, value in opts.keys:
        start = text.find(key)
        while start != -1:
            spans.append((start, start + len(key), value))
            start = text.find(key, start + 1)
    return spans


def _contained(text: str, opts: _Options) -> set[str]:
    spans = _occurrences(text, opts)
    return {
        value
        for start, end, value in spans
        if not any(
            v != value and s <= start and end <= e and e - s > end - start
            for s, e, v in spans
        )
    }


def _is_subsequence(short: str, long: str) -> bool:
    chars = iter(long)
    return all(c in chars for c in short)


def _fuzzy(text: str, opts: _Options) -> set[str]:
    if len(text) < 2:
        return set()
    for fits in (str.__contains__, lambda key, t: _is_subsequence(t, key)):
        values = {value for key, value in opts.keys if fits(key, text)}
        if values:
            return values
    return set()


def _listed(values: Iterable[str], opts: _Options) -> str:
    chosen = set(values)
    return "、".join(v for v in opts.values if v in chosen)


_FILLER = re.compile(r"[的是\s,，。.、;；:：!！]+")


def check(raw: str, *, options: Iterable | None = None, **_: object) -> Result:
    """One of ``options``; the value is the option's canonical value.

    When the answer as typed fits nothing, it is tried once more without
    filler ("外地的，农村户口" → "外地农村户口").
    """
    opts = _options(options)
    text = _fold(raw)
    for attempt in dict.fromkeys((text, _FILLER.sub("", text))):
        value = opts.exact(attempt)
        if value is not None:
            return valid(value)
        for match in (_contained, _fuzzy):
            values = match(attempt, opts)
            if len(values) == 1:
                return valid(values.pop())
            if values:
                return invalid(messages.ENUM_AMBIGUOUS.format(options=_listed(values, opts)))
    return invalid(messages.ENUM_NO_MATCH.format(options=_listed(opts.values, opts)))


def check_many(raw: str, *, options: Iterable | None = None, **_: object) -> Result:
    """Several of ``options`` (multi_enum fields); the value is a list in option order.

    Every option whose value or alias the answer contains counts ("重疾和百万医疗").
    """
    opts = _options(options)
    text = _fold(raw)
    exact = opts.exact(text)
    chosen = {exact} if exact is not None else _contained(text, opts)
    if not chosen:
        return invalid(messages.ENUM_NO_MATCH.format(options=_listed(opts.values, opts)))
    return valid([v for v in opts.values if v in chosen])


def extract_many(text: str, *, options: Iterable | None = None, **_: object) -> list[Found]:
    """Like ``extract``, each value as the one-item list ``check_many`` gives for it."""
    return [Found([f.value], f.start, f.end, f.raw) for f in extract(text, options=options)]


def extract(text: str, *, options: Iterable | None = None, **_: object) -> list[Found]:
    """Values and aliases of ``options`` in a sentence, longest first, not overlapping."""
    opts = _options(options)
    folded = _fold_keep_length(text)
    return longest_first(
        Found(value, start, end, text[start:end])
        for start, end, value in _occurrences(folded, opts)
    )

