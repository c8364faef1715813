"""What a number in a message measures, read from the unit that follows it.

"一个月也就七千来块" holds a duration (一个月) and money (七千来块), no count:
"个月" is a unit of its own, not "个". A slot says what it measures by its
``unit`` (岁, 个, 元) or its type (a bucket is an amount of money), and a
number whose unit measures something else is never its value: one month is
not one child, 7000 yuan not an age, a family of three not three children.
"""

from __future__ import annotations

import re
from enum import Enum

from si_agent.config.model import FieldDef
from si_agent.validators import extract


class Quantity(str, Enum):
    """What a number counts."""

    AGE = "age"
    COUNT = "count"
    MONEY = "money"
    DURATION = "duration"
    PEOPLE = "people"  # the size of a household ("一家三口"), not a number of children


# Unit words, longest first so that "个月" is not read as "个".
_UNITS: tuple[tuple[str, Quantity], ...] = (
    ("周岁", Quantity.AGE), ("岁", Quantity.AGE),
    ("个多月", Quantity.DURATION), ("个月", Quantity.DURATION), ("个星期", Quantity.DURATION),
    ("星期", Quantity.DURATION), ("年", Quantity.DURATION), ("天", Quantity.DURATION),
    ("周", Quantity.DURATION), ("月", Quantity.DURATION),
    ("块钱", Quantity.MONEY), ("元", Quantity.MONEY), ("块", Quantity.MONEY),
    ("万", Quantity.MONEY), ("千", Quantity.MONEY), ("百万", Quantity.MONEY),
    ("口人", Quantity.PEOPLE), ("口", Quantity.PEOPLE), ("个人", Quantity.PEOPLE),
    ("人", Quantity.PEOPLE),
    # grown-ups counted are no children: "上头两个老人 下头一个娃"
    *((f"{measure}{who}", Quantity.PEOPLE) for who in ("老人", "大人", "长辈", "老的", "兄弟", "姐妹")
      for measure in ("个", "位", "")),
    ("个", Quantity.COUNT), ("位", Quantity.COUNT), ("胎", Quantity.COUNT),
    ("娃", Quantity.COUNT),
)
# A rough number's hedge between it and its unit: "40多岁", "七千来块", "两万左右".
_ROUGH = re.compile(r"(?:多|来|余|几)?")
_MULTIPLIER = re.compile(r"[万千亿kKwW]")
_ONE = frozenset({"一", "1"})
_NEAR = 4  # characters between a "per month" and the amount it goes with
_NUMERAL_NEAR = re.compile(rf"[^，,。；;！!？?\s]{{0,{_NEAR}}}?[0-9零〇两三四五六七八九十百千万]")
_NUMERAL_BEFORE = re.compile(rf"[0-9零〇两三四五六七八九十百千万][^，,。；;！!？?\s]{{0,{_NEAR}}}$")


def unit_after(text: str, end: int) -> tuple[str, Quantity] | None:
    """The unit word after a number ending at ``end`` (past a hedge), and what it measures."""
    m = _ROUGH.match(text, end)
    at = m.end() if m else end
    return next(((word, q) for word, q in _UNITS if text.startswith(word, at)), None)


def measured(text: str, start: int, end: int) -> Quantity | None:
    """What the number at ``text[start:end]`` measures, by its unit; an amount
    with 万 or 千 and no unit after it is money ("一年二十多万", "月薪8千")."""
    unit = unit_after(text, end)
    if unit is not None:
        return unit[1]
    return Quantity.MONEY if _MULTIPLIER.search(text[start:end]) else None


# An amount said per month, next to it: "保费一个月两百", "每月交三百", "两百块一个月".
_MONTH_BEFORE = re.compile(r"(?:一个月|每个?月|月交|月缴|按月)(?:交|缴|花|出|掏|也就|就|大概)?\s*$")
_MONTH_AFTER = re.compile(r"\s*(?:元|块钱|块)?\s*(?:一个月|每个?月|一月)")
# A yearly amount asked for: "年保费预算", "年收入".
_YEARLY = re.compile(r"年(?:保费|收入|缴|交|预算)|每年")


def per_month(text: str, start: int, end: int) -> bool:
    """Whether the amount at ``text[start:end]`` is said per month."""
    return bool(_MONTH_BEFORE.search(text[max(0, start - 6):start])
                or _MONTH_AFTER.match(text, end))


def yearly(f: FieldDef) -> bool:
    """Whether ``f`` asks for an amount per year (its label says so: 年保费预算)."""
    return (f.type in ("integer", "number") and slot_measures(f) is Quantity.MONEY
            and bool(_YEARLY.search(f.label)))  # (a bucket reads "月薪…" itself)


_MONTHS = re.compile(r"\s*(?:多|来)?个?月")
_IN_YEARS = re.compile("年限|年数")


def months_as_years(f: FieldDef, raw: str) -> str | None:
    """A number of months said for a field counted in years ("交了两百四十个月" for
    缴费年限): the whole years it makes, as digits; None for anything else."""
    if not _IN_YEARS.search(f.label) or f.type not in ("integer", "number"):
        return None
    found = extract("number", raw)
    if len(found) != 1 or not _MONTHS.match(raw, found[0].end):
        return None
    months = float(found[0].value)
    years = months / 12 if f.type == "number" else months // 12
    return f"{years:g}" if years >= 1 else None


def is_per_period(text: str, start: int, end: int) -> bool:
    """Whether the number at ``text[start:end]`` is the "one" of a rate: "一个月" in
    "一个月八千五" or "九千二百块一个月" says per month, and is no value of its own."""
    unit = unit_after(text, end)
    if text[start:end] not in _ONE or unit is None or unit[1] is not Quantity.DURATION:
        return False
    after = end + len(unit[0])
    return bool(_NUMERAL_NEAR.match(text, after)
                or _NUMERAL_BEFORE.search(text[max(0, start - _NEAR - 1):start]))


# What a numeric field without a unit measures, by the words of its label: 退休年龄 an age,
# 缴费年限 a duration ("十八岁就上班了，交了三十二年": 32), 社平工资 money, 子女数量 a count.
_LABEL_MEASURES: tuple[tuple[re.Pattern[str], Quantity], ...] = (
    (re.compile("年龄|岁"), Quantity.AGE),
    (re.compile("年限|年数|工龄|时长|期限"), Quantity.DURATION),
    (re.compile("工资|收入|金额|余额|储存额|保额|预算|保费|基数|费用"), Quantity.MONEY),
    (re.compile("数量|人数|个数"), Quantity.COUNT),
)


def slot_measures(f: FieldDef) -> Quantity | None:
    """What a numeric slot or field measures: by its unit, money for an amount's range,
    else by the words of its label."""
    if f.type == "bucket":
        return Quantity.MONEY
    if f.unit:
        unit = unit_after(f.unit, 0)
        return unit[1] if unit is not None else None
    if f.type in ("integer", "number"):
        return next((q for pattern, q in _LABEL_MEASURES if pattern.search(f.label)), None)
    return None


def may_measure(f: FieldDef, quantity: Quantity | None) -> bool:
    """Whether a number measuring ``quantity`` may be the value of ``f``: not when
    both are known and differ."""
    slot = slot_measures(f)
    return quantity is None or slot is None or slot is quantity


# One of the things counted, told by its age: "娃今年三岁", "儿子5岁了", "女儿刚满八个月".
_AGE_AFTER = re.compile(r"(?:今年|现在|才|刚|已经|都|也|满|刚满|快|马上)*"
                        r"[0-9零〇一二两三四五六七八九十半]+(?:多|来)?(?:周岁|岁|个多月|个月)")
_COUNT_BEFORE = re.compile(r"[0-9零〇一二两俩三四五六七八九十几](?:个|位|胎)?$")


def one_told_by_age(f: FieldDef, clause: str) -> bool:
    """Whether ``clause`` speaks of one of the things a count slot counts, by its age
    ("娃今年三岁" is one child, three its age); "两个孩子，大的五岁" counts them itself."""
    if slot_measures(f) is not Quantity.COUNT:
        return False
    for cue in f.cues:
        at = clause.find(cue)
        while at >= 0:
            if _AGE_AFTER.match(clause, at + len(cue)) and not _COUNT_BEFORE.search(clause[:at]):
                return True
            at = clause.find(cue, at + 1)
    return False
