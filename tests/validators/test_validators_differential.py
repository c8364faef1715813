"""Differential tests: ``idcard`` against python-stdnum, ``phone`` against phonenumbers.

Both references are independent implementations; on generated numbers (fixed
seeds) we must agree with them except where our rules differ on purpose, and
each such difference is checked to have exactly that cause.

idcard vs ``stdnum.cn.ric``:
- stdnum valid, ours invalid: only for our extra checks: birth date after
  today or before 1900, or a region that is not county-level (first two digits
  not a province, or ``xx0000``).
- stdnum invalid, ours valid: only for residence permits (810000, 820000,
  830000), which stdnum does not know (or knows only from 1997/1999 on).
stdnum 2.x raises KeyError (instead of answering False) for a number whose
first two digits are a province it knows without counties (71, 81, 82) and
whose next four are not 0000; we count that as "invalid".
stdnum also checks the county code against its history of codes; our
generator draws regions from that history with birth years when they were in
use, so that check agrees by construction.

phone vs ``phonenumbers`` (region CN, valid and of type MOBILE):
- phonenumbers valid, ours invalid: never.
- ours valid, phonenumbers invalid: numbers in 13-19 blocks not allocated to
  a carrier; we accept the whole range on purpose (see ``phone`` docstring).
"""

from __future__ import annotations

import collections
import random
import re
from datetime import date, timedelta
from pathlib import Path

import phonenumbers
import stdnum
from stdnum.cn import ric
from validators_support import TODAY, id_check_char

from si_agent.validators import check

PROVINCES = set(
    "11 12 13 14 15 21 22 23 31 32 33 34 35 36 37 41 42 43 44 45 46 "
    "50 51 52 53 54 61 62 63 64 65".split()
)
PERMITS = {"810000", "820000", "830000"}
N_IDS = 12_000
N_PHONES = 12_000


def _stdnum_regions() -> list[tuple[str, int, int]]:
    """(6-digit code, first year, last year) for every county-level code stdnum knows."""
    path = Path(stdnum.__file__).parent / "cn" / "loc.dat"
    regions = []
    province = ""
    for line in path.read_text("utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        if not line.startswith(" "):
            province = line.split()[0]
            continue
        code, _, rest = line.strip().partition(" ")
        counties = re.search(r'county="([^"]*)"', rest).group(1)
        if code == "0000":
            continue  # province-level entries are generated on purpose below
        for county in counties.split(","):
            m = re.match(r"\[(\d*)-(\d*)\]", county)
            first = int(m.group(1)) if m and m.group(1) else 1900
            last = int(m.group(2)) if m and m.group(2) else TODAY.year
            first, last = max(first, 1900), min(last, TODAY.year)
            if first <= last and province + code not in PERMITS:
                regions.append((province + code, first, last))
    return regions


def _random_date(rng: random.Random, first: date, last: date) -> date:
    return first + timedelta(days=rng.randrange((last - first).days + 1))


def _birth(rng: random.Random, first_year: int, last_year: int) -> str:
    last = min(date(last_year, 12, 31), TODAY)
    return _random_date(rng, date(first_year, 1, 1), last).strftime("%Y%m%d")


def _with_check(first17: str) -> str:
    return first17 + id_check_char(first17)


def _seq(rng: random.Random) -> str:
    return f"{rng.randrange(1000):03d}"


def _generate_ids(rng: random.Random, n: int) -> list[tuple[str, str]]:
    regions = _stdnum_regions()

    def valid() -> str:
        code, first, last = rng.choice(regions)
        return _with_check(code + _birth(rng, first, last) + _seq(rng))

    def wrong_check() -> str:
        number = valid()
        return number[:17] + rng.choice([c for c in "0123456789X" if c != number[17]])

    def swapped() -> str:
        number = valid()
        while True:
            i = rng.randrange(16)
            if number[i] != number[i + 1]:
                return number[:i] + number[i + 1] + number[i] + number[i + 2:]

    def one_digit_changed() -> str:
        number = valid()
        i = rng.randrange(17)
        digit = rng.choice([d for d in "0123456789" if d != number[i]])
        return number[:i] + digit + number[i + 1:]

    def bad_date() -> str:
        code, _, _ = rng.choice(regions)
        year = rng.randrange(1930, 2020)
        month_day = rng.choice(["0230", "0231", "0431", "0631", "0931", "1131", "0001",
                                "1301", "0132", "0100", "9999"])
        if year % 4 and rng.random() < 0.2:
            month_day = "0229"
        return _with_check(f"{code}{year}{month_day}{_seq(rng)}")

    def lower_x() -> str:
        while True:
            number = valid()
            if number.endswith("X"):
                return number.lower()

    def future() -> str:
        code = rng.choice([r for r in regions if r[2] == TODAY.year])[0]
        birth = _random_date(rng, TODAY + timedelta(days=1), date(2099, 12, 31))
        return _with_check(code + birth.strftime("%Y%m%d") + _seq(rng))

    def before_1900() -> str:
        code = rng.choice(regions)[0]
        birth = _random_date(rng, date(1850, 1, 1), date(1899, 12, 31))
        return _with_check(code + birth.strftime("%Y%m%d") + _seq(rng))

    def bad_region() -> str:
        first_two = rng.choice([f"{i:02d}" for i in range(100) if f"{i:02d}" not in PROVINCES])
        return _with_check(first_two + f"{rng.randrange(10000):04d}"
                           + _birth(rng, 1940, 2020) + _seq(rng))

    def province_level() -> str:
        first_two = rng.choice(sorted(PROVINCES))
        return _with_check(first_two + "0000" + _birth(rng, 1940, 2020) + _seq(rng))

    def permit() -> str:
        return _with_check(rng.choice(sorted(PERMITS)) + _birth(rng, 1940, 2020) + _seq(rng))

    def random_chars() -> str:
        return "".join(rng.choice("0123456789") for _ in range(17)) + rng.choice("0123456789Xx")

    kinds = [
        (valid, 30), (wrong_check, 12), (swapped, 10), (one_digit_changed, 10), (bad_date, 10),
        (lower_x, 5), (future, 5), (before_1900, 4), (bad_region, 5), (province_level, 3),
        (permit, 3), (random_chars, 3),
    ]
    makers, weights = zip(*kinds, strict=True)
    return [(maker.__name__, maker()) for maker in rng.choices(makers, weights, k=n)]


def _stdnum_valid(number: str) -> bool:
    try:
        return ric.is_valid(number)
    except KeyError:  # stdnum's lookup of a county under 71/81/82 (see module docstring)
        return False


def _our_extra_objection(number: str) -> str | None:
    """Why our extra rules refuse a number stdnum accepts, computed independently."""
    upper = number.upper()
    if upper[:6] in PERMITS or upper[:6] == "710000":
        pass
    elif upper[:2] not in PROVINCES or upper[2:6] == "0000":
        return "region"
    birth = date(int(upper[6:10]), int(upper[10:12]), int(upper[12:14]))
    if birth.year < 1900:
        return "before_1900"
    if birth > TODAY:
        return "future"
    return None


_EXPECTED_MESSAGE = {
    "region": "身份证号码的前6位不是有效的地区代码。",
    "before_1900": "身份证号码中的出生日期早于1900年。",
    "future": "身份证号码中的出生日期晚于今天。",
}


def test_idcard_agrees_with_stdnum():
    rng = random.Random(20250601)
    generated = _generate_ids(rng, N_IDS)
    outcomes: collections.Counter = collections.Counter()
    unexplained = []
    for kind, number in generated:
        theirs = _stdnum_valid(number)
        ours = check("idcard", number, today=TODAY)
        if theirs and ours.ok:
            outcomes["both valid"] += 1
        elif not theirs and not ours.ok:
            outcomes["both invalid"] += 1
        elif theirs:
            reason = _our_extra_objection(number)
            outcomes[f"stdnum valid, ours invalid: {reason}"] += 1
            if reason is None or ours.error != _EXPECTED_MESSAGE[reason]:
                unexplained.append((kind, number, "stdnum valid", ours.error))
        else:
            outcomes["stdnum invalid, ours valid: residence permit"] += 1
            if number[:6] not in PERMITS:
                unexplained.append((kind, number, "stdnum invalid", ours.value))
    kinds = collections.Counter(kind for kind, _ in generated)
    summary = f"{len(generated)} generated {dict(kinds)}; outcomes {dict(outcomes)}"
    print("\nidcard vs stdnum:", summary)
    assert len(generated) >= 10_000
    assert unexplained == [], summary
    assert outcomes["both valid"] > 3000 and outcomes["both invalid"] > 4000, summary
    # Every corrupted kind must be refused by both.
    for kind, number in generated:
        if kind in {"wrong_check", "swapped", "one_digit_changed", "bad_date", "bad_region"}:
            assert not check("idcard", number, today=TODAY).ok, (kind, number)


def _is_cn_mobile(number: str) -> bool:
    try:
        parsed = phonenumbers.parse(number, "CN")
    except phonenumbers.NumberParseException:
        return False
    return (phonenumbers.is_valid_number(parsed)
            and phonenumbers.number_type(parsed) == phonenumbers.PhoneNumberType.MOBILE)


def _format_as_typed(rng: random.Random, number: str) -> str:
    style = rng.randrange(5)
    if style == 1:
        return f"{number[:3]} {number[3:7]} {number[7:]}"
    if style == 2:
        return f"{number[:3]}-{number[3:7]}-{number[7:]}"
    if style == 3:
        return "+86 " + number
    if style == 4:
        return "0086" + number
    return number


def test_phone_agrees_with_phonenumbers():
    rng = random.Random(86)
    outcomes: collections.Counter = collections.Counter()
    gap_blocks: collections.Counter = collections.Counter()
    missed = []
    for _ in range(N_PHONES):
        # Second digit 0-9, weighted towards the mobile range 3-9.
        second = rng.choice("0123456789" + "3456789" * 5)
        number = "1" + second + "".join(rng.choice("0123456789") for _ in range(9))
        theirs = _is_cn_mobile(number)
        ours = check("phone", _format_as_typed(rng, number))
        assert not ours.ok or ours.value == number
        if theirs and ours.ok:
            outcomes["both valid"] += 1
        elif not theirs and not ours.ok:
            outcomes["both invalid"] += 1
        elif theirs:
            outcomes["phonenumbers valid, ours invalid"] += 1
            missed.append(number)
        else:
            outcomes["ours valid, phonenumbers invalid"] += 1
            gap_blocks[number[:3]] += 1
    accepted = outcomes["both valid"] + outcomes["ours valid, phonenumbers invalid"]
    gap = outcomes["ours valid, phonenumbers invalid"]
    summary = (f"{N_PHONES} generated; outcomes {dict(outcomes)}; we accept {gap} of our "
               f"{accepted} ({gap / accepted:.1%}) that phonenumbers rejects, in blocks "
               f"{sorted(gap_blocks)}")
    print("\nphone vs phonenumbers:", summary)
    assert missed == [], summary
    assert gap / accepted < 0.30, summary
    # The gap is made of unallocated blocks: at most a quarter of the 70 blocks 130-199.
    assert len(gap_blocks) <= 18, summary
    assert outcomes["both invalid"] > 500, summary
