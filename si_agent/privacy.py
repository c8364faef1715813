"""Masking of personal data (ID numbers, phones, bank cards) in text and arguments.

Used for decision records and logs; the turn object masks field values itself.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import date
from functools import lru_cache
from typing import Any

from si_agent.config.model import MASKED_TYPES, Business
from si_agent.validators import check, extract, mask
from si_agent.validators.base import fold_width
from si_agent.validators.spoken import DIGIT_CHARS, SPOKEN_DIGITS, read

_SCAN_ORDER = ("idcard", "bank_card", "phone")
# Digit runs the validators do not recognise (a mistyped ID or card, a number
# typed in groups like "3301 2219 6303 1501 78") are withheld all the same.
_LONG_DIGITS = re.compile(r"(?<!\d)\d(?:[ \-]?\d){10,}(?!\d)[Xx]?")
# The same spoken, digit by digit ("一三八零零一三八零零三").
_LONG_SPOKEN = re.compile(rf"[{DIGIT_CHARS}](?:[ \-]?[{DIGIT_CHARS}]){{10,}}")


def personal_spans(text: str) -> tuple[tuple[int, int, str, str], ...]:
    """``(start, end, kind, raw)`` of each ID number, card, phone or long number, in order.

    Remembered for the last texts seen (``_SPANS_KEPT``; a turn scans its message for
    the decision record, the turn record and the log, and a reply's values twice): the
    scan runs three validators over the whole text, the largest part of masking a turn.
    Keyed by the date too, as an ID number's birth date must not be in the future.
    """
    return _spans(text, date.today())


_SPANS_KEPT = 1024


@lru_cache(maxsize=_SPANS_KEPT)
def _spans(text: str, today: date) -> tuple[tuple[int, int, str, str], ...]:
    spans: list[tuple[int, int, str, str]] = []

    def free(start: int, end: int) -> bool:
        return not any(start < e and s < end for s, e, _, _ in spans)

    for kind in _SCAN_ORDER:
        spans += [(f.start, f.end, kind, f.raw) for f in extract(kind, text, today=today)
                  if free(f.start, f.end)]
    for pattern in (_LONG_DIGITS, _LONG_SPOKEN):
        spans += [(m.start(), m.end(), _kind_of(m.group()), m.group())
                  for m in pattern.finditer(text) if free(m.start(), m.end())]
    return tuple(sorted(spans))


def _kind_of(raw: str) -> str:
    """The kind of a long number the scan in context missed: a phone right after a
    spoken digit ("第三 13812345678") is still a phone, masked as one (138****5678);
    anything else is a "number" (an 18-digit one that is no ID today may pass a bank
    card's check digit by chance: it stays a number, masked all the same)."""
    compact = re.sub(r"[\s-]", "", fold_width(raw))
    return "phone" if check("phone", compact).ok else "number"


def masked(kind: str, raw: str) -> str:
    """How a personal value found in text is shown: masked by its kind."""
    raw = read(fold_width(raw), min_run=1).text.translate(SPOKEN_DIGITS)  # "…一二三叉": …123X
    if kind == "number":
        digits = re.sub(r"[^\dXx]", "", raw)  # an ID's check character stays (…017X)
        return f"{digits[:4]}****{digits[-4:]}"
    return mask(kind, re.sub(r"[\s-]", "", raw))


def redact_text(text: str) -> str:
    """``text`` with every ID number, bank card, mobile and long number masked."""
    for start, end, kind, raw in reversed(personal_spans(text)):
        text = text[:start] + masked(kind, raw) + text[end:]
    return text


def redact_arguments(arguments: Mapping[str, Any], business: Business | None) -> dict[str, Any]:
    """Tool-call arguments with personal values masked by their field's type."""
    types = {f.key: f.type for f in business.fields} if business else {}

    def one(key: str | None, value: Any) -> Any:
        if isinstance(value, Mapping):
            return {k: one(k, v) for k, v in value.items()}
        if not isinstance(value, str):
            return value
        if key in types and types[key] in MASKED_TYPES:
            return mask(types[key], value)
        return redact_text(value)

    out = {k: one(k, v) for k, v in arguments.items()}
    if "field_key" in out and out.get("value") and types.get(out["field_key"]) in MASKED_TYPES:
        out["value"] = mask(types[out["field_key"]], str(arguments["value"]))
    return out


_PLACEHOLDER_KIND = {"idcard": "ID", "phone": "PHONE", "bank_card": "CARD", "number": "NUM"}


class Redactor:
    """Replaces personal data by placeholders before text leaves for a model.

    ``<ID_1>``, ``<PHONE_1>``, ``<CARD_1>``: the same value always gets the same
    placeholder within one redactor (one model request, history included), and
    ``restore`` maps placeholders in the model's tool arguments back.
    """

    def __init__(self) -> None:
        self._by_value: dict[str, str] = {}
        self._by_placeholder: dict[str, str] = {}
        self._counts: dict[str, int] = {}

    def placeholder(self, kind: str, raw: str) -> str:
        if raw in self._by_value:
            return self._by_value[raw]
        label = _PLACEHOLDER_KIND[kind]
        self._counts[label] = self._counts.get(label, 0) + 1
        token = f"<{label}_{self._counts[label]}>"
        self._by_value[raw] = token
        self._by_placeholder[token] = raw
        return token

    def redact(self, text: str) -> str:
        """``text`` with every ID number, bank card, mobile and long number replaced."""
        tokens = [(start, end, self.placeholder(kind, raw))
                  for start, end, kind, raw in personal_spans(text)]
        for start, end, token in reversed(tokens):
            text = text[:start] + token + text[end:]
        return text

    def restore(self, value: Any) -> Any:
        """``value`` (a string, or lists/dicts of them) with placeholders mapped back."""
        if isinstance(value, str):
            for token, raw in self._by_placeholder.items():
                value = value.replace(token, raw)
            return value
        if isinstance(value, list):
            return [self.restore(v) for v in value]
        if isinstance(value, dict):
            return {k: self.restore(v) for k, v in value.items()}
        return value

    def restore_masked(self, text: str) -> str:
        """Model text for the citizen: placeholders become masked values."""
        kinds = {v: k for k, v in _PLACEHOLDER_KIND.items()}
        for token, raw in self._by_placeholder.items():
            text = text.replace(token, masked(kinds[token[1:].split("_")[0]], raw))
        return text
