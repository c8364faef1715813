"""Mainland China mobile numbers (手机号码).

Eleven digits starting with 13 to 19. Spaces, dashes and brackets are ignored,
and so is a ``+86``, ``0086`` or ``86`` country prefix. By design we accept the
whole 13-19 range: carriers open new number blocks every year, and refusing a
citizen's real number because our table is old is worse than accepting a
number from a block not yet in service. ``phonenumbers`` knows the allocated
blocks and rejects the rest; the differential test in
``tests/validators/test_differential.py`` measures that gap.
"""

from __future__ import annotations

import re

from . import messages
from .base import Found, Result, invalid, valid

_SEPARATORS = re.compile(r"[\s\-()]+")
_COUNTRY = re.compile(r"(?:\+86|0086|86)(?=1\d{10}$)")
_MOBILE = re.compile(r"1[3-9]\d{9}")
_LANDLINE = re.compile(r"0\d{9,11}")
_IN_TEXT = re.compile(
    r"(?<![\d+])(?:(?:\+|00)?86[ -]?)?1[3-9]\d(?:[ -]?\d{4}){2}(?!\d)"
)


def _digits(raw: str) -> str:
    number = _SEPARATORS.sub("", raw)
    if number.startswith(("+86", "0086", "86")):
        number = _COUNTRY.sub("", number, count=1)
    return number


def check(raw: str, **_: object) -> Result:
    """A mobile number; the value is its 11 digits."""
    number = _digits(raw)
    if not number.isdigit() or not number.isascii():
        return invalid(messages.PHONE_CHARS)
    if _MOBILE.fullmatch(number):
        return valid(number)
    if _LANDLINE.fullmatch(number):
        return invalid(messages.PHONE_LANDLINE)
    if len(number) != 11:
        return invalid(messages.PHONE_LENGTH)
    return invalid(messages.PHONE_PREFIX)


def extract(text: str, **_: object) -> list[Found]:
    """Mobile numbers, also written "138 1234 5678" or "+86-138-1234-5678".

    A number is never taken from inside a longer run of digits, so no phone is
    found inside an ID number or a bank card number. Numbers said digit by digit
    ("幺三八 零零幺三 八零零四") are read by ``spoken`` before this is called.
    """
    return [Found(_digits(m.group()), m.start(), m.end(), m.group())
            for m in _IN_TEXT.finditer(text)]
