"""A value as a web control takes it: an ``<input type=date>`` takes only
``yyyy-mm-dd``, whatever form the citizen's date came in ("2025/03/01",
"2025年3月1日", "20250301"); the same for ``time`` (``HH:MM``), ``month``
(``yyyy-mm``), ``datetime-local`` (``yyyy-mm-ddTHH:MM``) and ``number`` (digits,
without thousands separators or a unit). Dates are read by the date validator
(``si_agent.validators.dates``), so the forms it knows are the forms it takes.

``typed(input_type, value)`` gives the text to put in, or None when the value
cannot be one of that type (the control is then reported, not filled with junk).
``as_list(value)`` splits a list value ("A、B", "A, B" or a list) for a checkbox
group or a multi-select.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from datetime import date

_TIME = re.compile(r"(?P<h>\d{1,2})(?:[:：时点](?P<m>\d{1,2}|半)?分?(?:[:：](?P<s>\d{1,2})秒?)?)?")
_HALF_DAY = re.compile(r"^(上午|早上|AM|A\.M\.)|(下午|晚上|PM|P\.M\.)$|^(下午|晚上)", re.I)
_MONTH = re.compile(r"(?P<y>\d{4})\s*(?:[-/.年]\s*(?P<m>\d{1,2})\s*月?|(?P<m2>\d{2}))")
_NUMBER = re.compile(r"[-+]?\d+(?:\.\d+)?")
_SPLIT = re.compile(r"\s*[、,，;；/\n]\s*")


def _date(value: str) -> date | None:
    from si_agent.validators.dates import check_date

    found = check_date(value.strip())
    return date.fromisoformat(found.value) if found.ok else None


def _time(value: str) -> str | None:
    text = unicodedata.normalize("NFKC", value).strip()
    half = _HALF_DAY.search(text)
    core = _HALF_DAY.sub("", text).strip()
    m = _TIME.fullmatch(core)
    if m is None:
        return None
    hour = int(m["h"])
    minute = 30 if m["m"] == "半" else int(m["m"] or 0)
    if half is not None and (half.group(2) or half.group(3)) and hour < 12:
        hour += 12
    if not (0 <= hour <= 23 and 0 <= minute <= 59):
        return None
    return f"{hour:02d}:{minute:02d}"


def _month(value: str) -> str | None:
    text = unicodedata.normalize("NFKC", value).strip()
    m = _MONTH.fullmatch(text.removesuffix("份"))
    if m is not None:
        month = int(m["m"] or m["m2"])
        return f"{int(m['y']):04d}-{month:02d}" if 1 <= month <= 12 else None
    day = _date(text)
    return f"{day.year:04d}-{day.month:02d}" if day else None


def _datetime(value: str) -> str | None:
    text = unicodedata.normalize("NFKC", value).strip()
    m = re.fullmatch(r"(?P<d>.+?日|.+?号|\d{4}[-/.]\d{1,2}[-/.]\d{1,2}|\d{8})[\sT]*(?P<t>.*)", text)
    if m is None:
        return None
    day = _date(m["d"])
    clock = _time(m["t"]) if m["t"] else "00:00"
    return f"{day.isoformat()}T{clock}" if day and clock else None


def _number(value: str) -> str | None:
    text = unicodedata.normalize("NFKC", value).replace(",", "").strip()
    found = _NUMBER.findall(text)
    return found[0] if len(found) == 1 else None


_PARTS = {"dd": "%d", "d": "%d", "day": "%d", "mm": "%m", "m": "%m", "month": "%m",
          "yyyy": "%Y", "year": "%Y", "日": "%d", "月": "%m", "年": "%Y"}
# A date's written form: "DD/MM/YYYY", "(mm-dd-yyyy)", "day-month-year", "YYYY.MM.DD".
_PATTERN = re.compile(r"(?<![a-z])(dd?|mm?|yyyy|day|month|year)([-/. ])(dd?|mm?|yyyy|day|month|year)"
                      r"\2(dd?|mm?|yyyy|day|month|year)(?![a-z])", re.IGNORECASE)
# An example date ("e.g. 15-05-1990"): its order where a part above 12 tells it.
_EXAMPLE = re.compile(r"(?<!\d)(\d{1,2})([-/.])(\d{1,2})\2(\d{4})(?!\d)")


def date_format(hint: str) -> str | None:
    """The ``strftime`` form a text box's label, placeholder or hint asks a date in
    ("DD/MM/YYYY" -> "%d/%m/%Y", "day-month-year", "e.g. 15-05-1990"), or None."""
    text = unicodedata.normalize("NFKC", hint)
    m = _PATTERN.search(text)
    if m is not None:
        parts = [_PARTS[p.lower()] for p in (m[1], m[3], m[4])]
        if sorted(parts) == ["%Y", "%d", "%m"]:
            return m[2].join(parts)
    m = _EXAMPLE.search(text)
    if m is not None:
        first, second = int(m[1]), int(m[3])
        if first > 12 >= second:
            return f"%d{m[2]}%m{m[2]}%Y"
        if second > 12 >= first:
            return f"%m{m[2]}%d{m[2]}%Y"
    if re.search(r"yyyy\s*年\s*mm?\s*月\s*dd?\s*日", text, re.IGNORECASE):
        return "%Y年%m月%d日"
    return None


def typed(input_type: str, value: str, hint: str = "") -> str | None:
    """``value`` as an input of ``input_type`` takes it, or None if it is none; other
    types take the value as it is, but a date in a text box whose ``hint`` (its label,
    placeholder, title or description) shows the form it wants is written so."""
    kind = input_type.lower()
    if kind in ("", "text", "input") and hint:
        form = date_format(hint)
        day = _date(value) if form else None
        if form and day:
            return day.strftime(form)
    if kind == "date":
        day = _date(value)
        return day.isoformat() if day else None
    if kind == "time":
        return _time(value)
    if kind == "month":
        return _month(value)
    if kind == "datetime-local":
        return _datetime(value)
    if kind in ("number", "range"):
        return _number(value)
    return value


def as_list(value: str | Sequence[str]) -> list[str]:
    """The items of a list value: a list as it is, a text split at 、 , ; / or lines."""
    if isinstance(value, str):
        return [v for v in _SPLIT.split(value.strip()) if v]
    return [str(v) for v in value if str(v)]
