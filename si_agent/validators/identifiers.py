"""Where identifiers (ID, mobile and bank card numbers) sit in a sentence.

Number-like types (year, date, integer, number) skip digits inside these
spans: the "1990" in an ID number is not a year, nor "1234" a quantity, also
when the number is said digit by digit ("三三零一…").
"""

from __future__ import annotations

from . import bank_card, idcard, phone, spoken


def identifier_spans(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of every ID, mobile and bank card number in ``text``."""
    if sum(c.isdigit() or c in spoken.SPOKEN for c in text) < 11:
        return []
    return [
        (f.start, f.end)
        for module in (idcard, phone, bank_card)
        for f in spoken.extract_read(module.extract, text)
    ]
