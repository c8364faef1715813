"""Bank card numbers (银行卡号): 16 to 19 digits passing the Luhn check."""

from __future__ import annotations

import re
from datetime import date

from . import idcard, messages
from .base import Found, Result, invalid, resolve_today, valid

_SEPARATORS = re.compile(r"[\s-]+")
_IN_TEXT = re.compile(r"(?<![\dA-Za-z])\d{4}(?:[ -]?\d{4}){3}(?:[ -]?\d{1,3})?(?![\dA-Za-z])")


def luhn_ok(digits: str) -> bool:
    """Whether a string of digits passes the Luhn (mod 10) check."""
    total = 0
    for i, d in enumerate(reversed(digits)):
        n = int(d)
        if i % 2:
            n = n * 2 - 9 if n > 4 else n * 2
        total += n
    return total % 10 == 0


def check(raw: str, **_: object) -> Result:
    """A card number; the value is its digits without separators."""
    digits = _SEPARATORS.sub("", raw)
    if not digits.isdigit() or not digits.isascii():
        return invalid(messages.BANK_CARD_CHARS)
    if not 16 <= len(digits) <= 19:
        return invalid(messages.BANK_CARD_LENGTH.format(n=len(digits)))
    if not luhn_ok(digits):
        return invalid(messages.BANK_CARD_CHECKSUM)
    return valid(digits)


def extract(text: str, *, today: date | None = None, **_: object) -> list[Found]:
    """Card numbers, contiguous or in groups of four.

    An 18-digit run that is a valid ID number is left to ``idcard``: about one
    ID number in ten passes the Luhn check by chance.
    """
    today = resolve_today(today)
    found = []
    for m in _IN_TEXT.finditer(text):
        digits = _SEPARATORS.sub("", m.group())
        if not luhn_ok(digits):
            continue
        if len(digits) == 18 and idcard.problem(digits, today) is None:
            continue
        found.append(Found(digits, m.start(), m.end(), m.group()))
    return found
