"""Masking of personal data (ID numbers, phones, bank cards) in text and arguments.

Used for decision records and logs; the turn object masks field values itself.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from si_agent.config.model import MASKED_TYPES, Business
from si_agent.validators import extract, mask

_SCAN_ORDER = ("idcard", "bank_card", "phone")


def redact_text(text: str) -> str:
    """``text`` with every ID number, bank card and mobile number masked."""
    spans: list[tuple[int, int, str]] = []
    for kind in _SCAN_ORDER:
        for found in extract(kind, text):
            if any(found.start < end and start < found.end for start, end, _ in spans):
                continue
            spans.append((found.start, found.end, mask(kind, found.value)))
    for start, end, masked in sorted(spans, reverse=True):
        text = text[:start] + masked + text[end:]
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
# Long digit runs the validators do not recognise (a mistyped ID or card) are
# still withheld from the model.
_LONG_DIGITS = re.compile(r"(?<!\d)\d{11,}(?!\d)")


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
        """``text`` with every ID number, bank card and mobile number replaced."""
        spans: list[tuple[int, int, str, str]] = []
        for kind in _SCAN_ORDER:
            for found in extract(kind, text):
                if any(found.start < end and start < found.end for start, end, _, _ in spans):
                    continue
                spans.append((found.start, found.end, kind, found.raw))
        for m in _LONG_DIGITS.finditer(text):
            if not any(m.start() < end and start < m.end() for start, end, _, _ in spans):
                spans.append((m.start(), m.end(), "number", m.group()))
        tokens = [(start, end, self.placeholder(kind, raw)) for start, end, kind, raw in sorted(spans)]
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
            kind = kinds[token[1:].split("_")[0]]
            shown = mask(kind, raw) if kind != "number" else f"{raw[:4]}****{raw[-4:]}"
            text = text.replace(token, shown)
        return text

    @property
    def count(self) -> int:
        return len(self._by_value)
