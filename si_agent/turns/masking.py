"""Texts of a turn as the record may keep them: every personal value masked, and where.

``mask_text(text, values)`` masks, in a citizen's message, a reply or a question:

1. every value the session holds for a field of an open type (a name, an address, an
   ID number, ...: anything but the closed types the audit log writes as they are),
   wherever it occurs as typed: names keep their first character (``张*``), ID, phone
   and card numbers their ends (``3301**********0178``), any other value becomes its
   field's label in brackets (``〔邮寄地址〕``);
2. then every ID number, bank card, mobile or long number left (``si_agent.privacy``),
   typed with spaces or spoken digit by digit too.

It returns the masked text and a ``Span`` for each value it masked, so a transcript
export can put a valid demo value of the same kind in its place.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from si_agent.audit.log import CLOSED_TYPES
from si_agent.config.model import MASKED_TYPES
from si_agent.privacy import masked, personal_spans
from si_agent.turns.model import Span

_MIN_VALUE_CHARS = 2  # a one-character value is no one's name or address


@dataclass(frozen=True)
class Known:
    """A value of the session's fields: key, type, label, the value, whether accepted."""

    key: str
    type: str
    label: str
    value: str
    valid: bool


def open_values(known: Iterable[Known]) -> list[Known]:
    """The values worth masking in texts (longest first, so a longer one wins)."""
    kept = [k for k in known if k.type not in CLOSED_TYPES and len(k.value) >= _MIN_VALUE_CHARS]
    return sorted(kept, key=lambda k: len(k.value), reverse=True)


def shown(kind: str, raw: str, label: str = "") -> str:
    """How a value of ``kind`` found in a text is kept."""
    if kind in MASKED_TYPES or kind == "number":
        return masked(kind, raw)
    if kind == "name":
        return raw[:1] + "*" * (len(raw) - 1)
    return f"〔{label or '已隐去'}〕"


def whole_message(text: str, key: str, kind: str, label: str) -> tuple[str, list[Span]]:
    """``text`` kept as one refused value of field ``key``: masked as its kind, or as the
    field's label when it is no number of that kind."""
    if kind in MASKED_TYPES and not _digits(text):
        piece = f"〔{label}〕"
    else:
        piece = shown(kind, text, label)
    return piece, [Span(start=0, end=len(piece), kind=kind, field=key, valid=False)]


def _digits(text: str) -> str:
    return re.sub(r"[^0-9Xx]", "", text).upper()


def mask_text(text: str, known: Iterable[Known], invalid_kinds: frozenset[str] = frozenset()
              ) -> tuple[str, list[Span]]:
    """``text`` masked (see the module docstring) and the spans of the masked values.

    ``invalid_kinds``: the field types refused in this turn; a number of such a kind
    that no accepted value explains is marked ``valid=False``.
    """
    values = open_values(known)
    found: list[tuple[int, int, str, Known | None, str]] = []  # start, end, kind, known, raw

    def free(start: int, end: int) -> bool:
        return all(end <= s or e <= start for s, e, *_ in found)

    for k in values:
        for m in re.finditer(re.escape(k.value), text):
            if free(m.start(), m.end()):
                found.append((m.start(), m.end(), k.type, k, m.group()))
    for start, end, kind, raw in personal_spans(text):
        if not free(start, end):
            continue
        digits = _digits(raw)
        owner = next((k for k in values if k.type in MASKED_TYPES and _digits(k.value) == digits),
                     None)
        found.append((start, end, owner.type if owner else kind, owner, raw))
    out: list[str] = []
    spans: list[Span] = []
    at = 0
    for start, end, kind, owner, raw in sorted(found, key=lambda f: f[0]):
        out.append(text[at:start])
        piece = shown(kind, raw, owner.label if owner else "")
        begin = sum(map(len, out))
        out.append(piece)
        if owner is not None:
            valid: bool | None = owner.valid
        elif kind in invalid_kinds or (kind == "number" and invalid_kinds & MASKED_TYPES):
            valid = False
        else:
            valid = None
        spans.append(Span(start=begin, end=begin + len(piece), kind=kind,
                          field=owner.key if owner else None, valid=valid))
        at = end
    out.append(text[at:])
    return "".join(out), spans
