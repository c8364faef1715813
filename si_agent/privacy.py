"""Masking of personal data (ID numbers, phones, bank cards) in text and arguments.

Used for decision records and logs; the turn object masks field values itself.
"""

from __future__ import annotations

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
