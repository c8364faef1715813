"""Masking personal values for display and logs: "3301**********1234"."""

from __future__ import annotations

from typing import Any

# Field type -> (characters kept at the start, characters kept at the end).
_KEEP = {"idcard": (4, 4), "phone": (3, 4), "bank_card": (4, 4)}


def mask(type: str, value: Any) -> str:
    """``value`` as it may be shown: ID, phone and card numbers starred in the middle.

    Other types come back as ``str(value)``; ``None`` becomes "". A value too
    short to keep both ends is starred entirely.
    """
    if value is None:
        return ""
    text = str(value)
    keep = _KEEP.get(type)
    if keep is None:
        return text
    head, tail = keep
    if len(text) <= head + tail:
        return "*" * len(text)
    return text[:head] + "*" * (len(text) - head - tail) + text[-tail:]
