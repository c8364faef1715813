"""Test helpers for the validators: valid ID and bank card numbers, a fixed today.

These compute check characters on their own, so tests do not trust the code
under test to build their inputs.
"""

from __future__ import annotations

from datetime import date

TODAY = date(2025, 6, 1)

_ID_WEIGHTS = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)
_ID_CHECK = "10X98765432"


def id_check_char(first17: str) -> str:
    """GB 11643 check character of the first 17 digits."""
    return _ID_CHECK[sum(int(d) * w for d, w in zip(first17, _ID_WEIGHTS, strict=True)) % 11]


def make_id(region: str = "330106", birth: str = "19900101", seq: str = "123") -> str:
    """An 18-character ID number with a correct check character."""
    first17 = region + birth + seq
    return first17 + id_check_char(first17)


def make_id_ending_in_x(region: str = "110105", birth: str = "19800512") -> str:
    """A valid ID number whose check character is X."""
    for n in range(1000):
        number = make_id(region, birth, f"{n:03d}")
        if number.endswith("X"):
            return number
    raise AssertionError("no sequence gives X")


def luhn_complete(prefix: str) -> str:
    """``prefix`` followed by the digit that makes it pass the Luhn check."""
    for d in "0123456789":
        digits = prefix + d
        total = 0
        for i, c in enumerate(reversed(digits)):
            n = int(c) * (2 if i % 2 else 1)
            total += n - 9 if n > 9 else n
        if total % 10 == 0:
            return digits
    raise AssertionError("unreachable")
