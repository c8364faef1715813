"""Long numbers read out digit by digit, as voice input writes them.

An ID, phone, bank card or application number said aloud arrives as a run of
single Chinese digits: "三三零一零二一九九五…", with 零/〇/洞 for 0, 幺 for 1,
两 for 2, 拐 for 7, a last "叉" for the ID's X, groups apart ("三三零 一二二"), a
filler between groups ("嗯", "那个"), full-width or Arabic digits mixed in, a
digit said twice ("两个八" for 88), the ID's X said as "大写的X", and an ID's
birth date read out as a date ("幺幺零幺零五 两千年一月十号 零三五三").

:func:`read` rewrites each such run as Arabic digits and remembers where every
character came from, so that what a validator finds in the reading is mapped
back onto the text the citizen typed (:func:`extract_read`). Only runs of single
digits are read: a Chinese numeral with 十/百/千/万/亿/点 next to it ("一个月",
"十二万三", "二零二五年") is never a long number and stays as it is.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

from . import bank_card, idcard, phone
from .base import Found

# How each spoken digit is written; the radio forms 洞/幺/两/拐 included.
SPOKEN = {"零": "0", "〇": "0", "洞": "0", "一": "1", "幺": "1", "二": "2", "两": "2",
          "三": "3", "四": "4", "五": "5", "六": "6", "七": "7", "拐": "7", "八": "8",
          "九": "9"}
SPOKEN_DIGITS = str.maketrans(SPOKEN)
DIGIT_CHARS = "".join(SPOKEN)
MIN_RUN = 7  # single digits in a row before a run is a number, not words
MAX_LENGTH = 19  # the longest identifier (a bank card): groups beyond it are another number
_SHORTEST = 11  # the shortest identifier (a mobile number)

_TOKEN = rf"[0-9{DIGIT_CHARS}]"
# spaces, dashes, commas, a filler between groups
_GAP = r"(?:[ \-，,、]|[嗯呃额啊]|那个|就是){0,4}"
_NUMERAL = f"{DIGIT_CHARS}十百千万亿点"
_RUN = re.compile(
    rf"(?<![0-9{_NUMERAL}.]){_TOKEN}(?:{_GAP}{_TOKEN})*(?:{_GAP}[叉Xx])?"
    rf"(?![0-9{_NUMERAL}]|\.\d)"
)
_GROUP = re.compile(rf"{_TOKEN}+|[叉Xx]")


_DIGIT = f"[0-9{DIGIT_CHARS}]"
# "两个八", "三个零": one digit said several times (next to other digits only).
_REPEAT = re.compile(rf"([两二三四])个({_DIGIT})")
_TIMES = {"两": 2, "二": 2, "三": 3, "四": 4}
# The ID's last letter said as a letter: "大写的X".
_CAPITAL_X = re.compile(r"大写(?:的)?(?=[Xx叉])")
# An ID's birth date read as a date after the six area digits: "两千年一月十号".
_UNITS = "一二三四五六七八九"
_YEAR = (r"(?:(?P<millennium>[两二]千)(?:零(?P<y1>[一二三四五六七八九])|(?P<y2>[一二]?十[一二三四五六七八九]?))?"
         rf"|(?P<y4>{_DIGIT}{{4}}))年")
_SMALL = r"(?:[一二三]?十[一二三四五六七八九]?|[一二三四五六七八九两]|[0-9]{1,2})"
_DATE = re.compile(rf"{_YEAR}(?P<month>{_SMALL})月(?P<day>{_SMALL})[号日]")
_AREA_BEFORE = re.compile(rf"{_DIGIT}{{6}}{_GAP}$")


def _small(word: str) -> int:
    """A number below 100 said in words ("十", "二十三", "两") or digits."""
    if word.isdigit():
        return int(word)
    if "十" not in word:
        return int(word.translate(SPOKEN_DIGITS))
    tens, _, units = word.partition("十")
    return (int(tens.translate(SPOKEN_DIGITS)) if tens else 1) * 10 + (
        int(units.translate(SPOKEN_DIGITS)) if units else 0)


def _birth_date(m: re.Match[str]) -> str | None:
    """The date ``m`` matched as eight digits, or None if it is no date."""
    if m["y4"]:
        year = int(m["y4"].translate(SPOKEN_DIGITS))
    else:
        year = 2000 + (int(m["y1"].translate(SPOKEN_DIGITS)) if m["y1"] else
                       _small(m["y2"]) if m["y2"] else 0)
    month, day = _small(m["month"]), _small(m["day"])
    if not (1900 <= year <= 2099 and 1 <= month <= 12 and 1 <= day <= 31):
        return None
    return f"{year:04d}{month:02d}{day:02d}"


def _rewrite(text: str) -> tuple[str, list[int]]:
    """``text`` with the spoken forms that are not single digits written as digits
    ("两个八" → "八八", "大写的X" → "X", a birth date after six digits → its eight
    digits), and for each character the index in ``text`` it came from."""
    edits: list[tuple[int, int, str]] = []
    for m in _REPEAT.finditer(text):
        near = re.search(rf"{_DIGIT}{_GAP}$", text[:m.start()]) or re.match(
            rf"{_GAP}{_DIGIT}", text[m.end():])
        if near:
            edits.append((m.start(), m.end(), m[2] * _TIMES[m[1]]))
    for m in _CAPITAL_X.finditer(text):
        if re.search(rf"{_DIGIT}{_GAP}$", text[:m.start()]):
            edits.append((m.start(), m.end(), ""))
    for m in _DATE.finditer(text):
        digits = _birth_date(m)
        if digits and _AREA_BEFORE.search(text[:m.start()]):
            edits.append((m.start(), m.end(), digits))
    if not edits:
        return text, list(range(len(text)))
    out: list[str] = []
    origin: list[int] = []
    at = 0
    for start, end, new in sorted(edits):
        if start < at:
            continue  # overlapping edits: the first one wins
        _copy(text, at, start, out, origin)
        out.extend(new)
        origin.extend(min(start + i, end - 1) for i in range(len(new)))
        at = end
    _copy(text, at, len(text), out, origin)
    return "".join(out), origin


@dataclass(frozen=True)
class Reading:
    """``text`` with its spoken runs as digits; ``origin[i]`` is where ``text[i]``
    came from in the text read."""

    text: str
    origin: tuple[int, ...]

    def span(self, start: int, end: int) -> tuple[int, int]:
        """The span of the text read that ``text[start:end]`` came from."""
        return self.origin[start], self.origin[end - 1] + 1


# A turn reads the same message for every identifier type and again to redact it
# (privacy), so the readings of recent texts are kept (``Reading`` is immutable).
READ_CACHE = 1024


@lru_cache(maxsize=READ_CACHE)
def read(text: str, *, min_run: int = MIN_RUN) -> Reading:
    """``text`` with every run of at least ``min_run`` single digits, one of them
    spoken, written in Arabic digits: fillers dropped, groups joined into numbers
    (see :func:`_starts`) kept one space apart (remembered for recent texts)."""
    source = text
    text, before = _rewrite(source)
    out: list[str] = []
    origin: list[int] = []
    at = 0
    for m in _RUN.finditer(text):
        groups = list(_GROUP.finditer(m.group()))
        digits = sum(len(g.group()) for g in groups)
        if digits < min_run or not any(c in SPOKEN for c in m.group()):
            continue
        _copy(text, at, m.start(), out, origin)
        starts = _starts([g.group().translate(SPOKEN_DIGITS).upper().replace("叉", "X")
                          for g in groups])
        for n, g in enumerate(groups):
            if n in starts:
                out.append(" ")  # another number follows
                origin.append(m.start() + g.start() - 1)
            for i, char in enumerate(g.group()):
                out.append("X" if char in "叉Xx" else SPOKEN.get(char, char))
                origin.append(m.start() + g.start() + i)
        at = m.end()
    if not out:
        return Reading(source, tuple(range(len(source))))
    _copy(text, at, len(text), out, origin)
    return Reading("".join(out), tuple(before[i] for i in origin))


def _starts(groups: list[str]) -> set[int]:
    """The groups that begin another number, in a run of digit groups said one after
    the other ("ID, then phone"): a number ends after the longest groups that make a
    valid ID, mobile or card number with nothing or another number after them, or
    else after as many groups as fit in :data:`MAX_LENGTH` digits."""
    starts: set[int] = set()
    first = 0
    while first < len(groups):
        fitting = valid = None
        total, rest = 0, sum(map(len, groups[first:]))
        for last in range(first, len(groups)):
            total += len(groups[last])
            if total > MAX_LENGTH and fitting is not None:
                break
            fitting = last
            if (rest - total == 0 or rest - total >= _SHORTEST) and _identifier(
                    "".join(groups[first:last + 1])):
                valid = last
        first = (fitting if valid is None else valid) + 1
        if first < len(groups):
            starts.add(first)
    return starts


def _identifier(digits: str) -> bool:
    return any(module.check(digits).ok for module in (idcard, phone, bank_card))


def _copy(text: str, start: int, end: int, out: list[str], origin: list[int]) -> None:
    out.extend(text[start:end])
    origin.extend(range(start, end))


def extract_read(extract: Callable[..., list[Found]], text: str, **options: object) -> list[Found]:
    """What ``extract`` finds in the reading of ``text``, with spans into ``text``."""
    reading = read(text)
    if reading.text == text:
        return extract(text, **options)
    found = []
    for f in extract(reading.text, **options):
        start, end = reading.span(f.start, f.end)
        found.append(Found(f.value, start, end, text[start:end]))
    return found
