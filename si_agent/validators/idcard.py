"""Resident identity card numbers (居民身份证号码, GB 11643-1999).

An 18-character number: a 6-digit region code, the birth date as YYYYMMDD, a
3-digit sequence and a check character computed with ISO 7064 MOD 11-2 (``X``
stands for 10). We check the shape, the check character, that the birth date
exists and lies between 1900-01-01 and today, and that the region is plausible:
the first two digits are a province-level code and the next four are not
``0000``. Residence permits for Hong Kong, Macau and Taiwan residents work the
other way round: they begin with exactly ``810000``, ``820000`` or ``830000``
(and ``710000``, Taiwan's code). We ship no county list: a well-formed number
from a county that never existed is accepted.
"""

from __future__ import annotations

import re
from datetime import date

from . import messages
from .base import Found, Result, invalid, resolve_today, valid

PROVINCE_CODES: frozenset[str] = frozenset(
    "11 12 13 14 15 21 22 23 31 32 33 34 35 36 37 41 42 43 44 45 46 "
    "50 51 52 53 54 61 62 63 64 65".split()
)
PERMIT_CODES: frozenset[str] = frozenset({"71", "81", "82", "83"})

_WEIGHTS = tuple(pow(2, 17 - i, 11) for i in range(17))
_CHECK_CHARS = "10X98765432"
_SHAPE = re.compile(r"\d{17}[\dX]")
_OLD_15 = re.compile(r"\d{15}")
_SPACES = re.compile(r"[\s-]+")
# 18 characters, optionally grouped by single spaces or dashes ("3301 0619 9001 0112 3x").
_IN_TEXT = re.compile(r"(?<![0-9A-Za-z])\d(?:[ -]?\d){16}[ -]?[\dXx](?![0-9A-Za-z])")


def check_char(first17: str) -> str:
    """The check character for the first 17 digits of a number."""
    total = sum(int(d) * w for d, w in zip(first17, _WEIGHTS, strict=False))
    return _CHECK_CHARS[total % 11]


def problem(number: str, today: date) -> str | None:
    """The diagnosis for an 18-character upper-case number, or None if valid."""
    if not _SHAPE.fullmatch(number):
        return messages.IDCARD_CHARS
    province, county = number[:2], number[2:6]
    if province in PERMIT_CODES:
        if county != "0000":
            return messages.IDCARD_REGION
    elif province not in PROVINCE_CODES or county == "0000":
        return messages.IDCARD_REGION
    try:
        birth = date(int(number[6:10]), int(number[10:12]), int(number[12:14]))
    except ValueError:
        return messages.IDCARD_BIRTH_INVALID
    if birth.year < 1900:
        return messages.IDCARD_BIRTH_TOO_EARLY
    if birth > today:
        return messages.IDCARD_BIRTH_FUTURE
    if number[17] != check_char(number):
        return messages.IDCARD_CHECKSUM
    return None


def check(raw: str, *, today: date | None = None, **_: object) -> Result:
    """An 18-character ID number; the value is upper-case (``x`` becomes ``X``)."""
    number = _SPACES.sub("", raw).upper()
    if len(number) != 18:
        if not any(c.isdigit() for c in number):  # words, not a number of the wrong length
            return invalid(messages.IDCARD_NO_DIGITS)
        if _OLD_15.fullmatch(number):
            return invalid(messages.IDCARD_OLD_15)
        return invalid(messages.IDCARD_LENGTH.format(n=len(number)))
    error = problem(number, resolve_today(today))
    return invalid(error) if error else valid(number)


def extract(text: str, *, today: date | None = None, **_: object) -> list[Found]:
    """Valid ID numbers standing alone (not inside a longer run of digits or letters)."""
    day = resolve_today(today)
    found = []
    for m in _IN_TEXT.finditer(text):
        number = _SPACES.sub("", m.group()).upper()
        if problem(number, day) is None:
            found.append(Found(number, m.start(), m.end(), m.group()))
    return found
