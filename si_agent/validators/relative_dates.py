"""Relative and colloquial dates ("上个月底", "下周一", "去年年底"), read by jionlp.

The ``date`` validator reads numeric and fully written dates with its own
regexes (``dates.py``); what they do not recognise comes here. jionlp's time
extractor finds the expressions in a sentence and its ``parse_time`` reads
them against ``today``; this module only decides which of its readings are
dates a citizen gives for a form:

- a reading is a :class:`Reading`: the first and last day it may mean, and
  where it stands in the text. One day is a point ("下周一"), several a span
  ("去年年底" is 2025-11-01 to 2025-12-31, as jionlp reads it);
- "三天前", "两周前", "三个月前", "半年前", "一年前" are the day that far back
  (jionlp reads "三个月前" as a month-wide window);
- the end of a month ("月底", "上个月底", "11月底", "上月末") is its last day,
  a point; jionlp reads it as the 25th to the last day;
- bare "月初", "月底", "月中", "上旬", "中旬", "下旬" are this month's; jionlp
  needs "本月" before them;
- "从…开始", "…起", "…以来", "…至今" keep only the time they start from;
- not read as dates: durations ("干了三个月"), periods ("每月"), a bare year or
  month ("缴费15年", "去年12月"), a day of the month alone ("15号楼"), times
  of day ("早上", "下午3点"), open-ended spans ("三个月以前") and numeric
  forms without any Chinese character ("2024-3/5"), which are the regexes'
  job.

Bounded: jionlp tries every substring of a run of "time characters" until
one parses, so its cost grows with the square of a run and the cube of a
repetitive one ("下周一下周一…" of 2,000 characters took a minute). It is
given only windows: each run of its time characters (found with its own
pattern, plus the two characters after, which it reads for units), at most
``WINDOW_CHARS`` long; a longer run is no one expression, and only its first
``LONG_RUN_PIECES`` pieces of ``PIECE_CHARS`` are read. A window repeated in a
message is read once. A message
may cost at most ``PARSE_CALLS`` parser calls and ``PARSE_SECONDS`` of the
parser's thread CPU time (one budget for a whole turn inside ``one_message``,
however many clauses the engine reads): then the parser refuses, the windows not yet read are skipped
(logged), and the readings found so far stand. Each thread has its
own parser (jionlp's keeps the time base of a call on itself), so one
citizen's message never waits for another's.

jionlp is imported on first use, not with si_agent (it takes ~0.2 s and
~35 MB). It works offline: it reads only the dictionaries in its own package.
It comes with the ``dates`` extra (``pip install 'si_agent[dates]'``); without
it, relative dates are not read (the regex forms still are) and a warning with
that hint is logged once.
"""

from __future__ import annotations

import contextlib
import functools
import io
import logging
import re
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

log = logging.getLogger(__name__)

INSTALL_HINT = "pip install 'si_agent[dates]'"

WINDOW_CHARS = 40  # the longest text the time parser is given (jionlp reads <= 35-char phrases)
PIECE_CHARS = 12  # a longer run is no one expression: its start is read in pieces this long
LONG_RUN_PIECES = 2  # how many pieces of such a run are read
PARSE_CALLS = 100  # time parser calls one message may cost (the test corpus needs <= 47)
PARSE_SECONDS = 0.02  # thread CPU time one message may cost in the time parser (normal: <= 13 ms)

_load_lock = threading.Lock()  # guards the import only, never a parse
_jionlp: Any = None
_missing = False
_local = threading.local()  # this thread's _Parser

_BARE_MONTH_PART = re.compile(
    r"(?<![\d〇零一二三四五六七八九十个上下本这今每月])(?:月[底末初中]|[上中下]旬)"
)
# A relative date has one of these; a message without any is not parsed at all.
_TIME_WORD = re.compile(r"[天日号周月年旬节前后底初末昨今明]|星期|礼拜|春节|元旦|清明|端午|中秋|国庆|除夕|五一|十一|冬至|元宵|七夕|重阳")
_START_WORDS = re.compile(r"^[从自于]")
_SINCE_WORDS = re.compile(r"(?:开始|以来|至今|起)$")
_BARE_DAY = re.compile(r"(?:\d{1,2}|[〇零一二三四五六七八九十]{1,3})[号日]")
_UNSURE_MARKS = frozenset("前后底初末旬中半")
_LONGEST_SPAN = 366  # days; "春节后" on 1 December is about ten months
_AGO = re.compile(r"(\d{1,2}|[一二两三四五六七八九十]{1,3}|半)(?:个)?(天|日|周|星期|礼拜|月|年)(?:以前|之前|前)")
_AGO_DAYS = {"天": 1, "日": 1, "周": 7, "星期": 7, "礼拜": 7}


@dataclass(frozen=True)
class Reading:
    """A date expression at ``text[start:end] == raw``, meaning a day in [first, last]."""

    first: date
    last: date
    start: int
    end: int
    raw: str
    # A bare year or calendar month ("去年12月"): a date missing its day.
    month_or_year: bool = False

    @property
    def is_point(self) -> bool:
        return self.first == self.last


class _QuietLogging:
    """Stands in for the ``logging`` module inside jionlp's time parser.

    jionlp logs a traceback at ERROR on the root logger for every candidate it
    fails to read ("2000元" in "每月2000元"); for us that is an ordinary "not a
    date", so it goes to our logger at DEBUG.
    """

    def __getattr__(self, name: str):
        return lambda msg, *args, **kwargs: log.debug("jionlp %s: %s", name, msg)


def _load() -> Any:
    """The jionlp module, or None when it is not installed."""
    global _jionlp, _missing
    if _jionlp is not None or _missing:
        return _jionlp
    with _load_lock:
        if _jionlp is None and not _missing:
            try:
                # jionlp and jiojio print a banner on import; library code must not.
                with contextlib.redirect_stdout(io.StringIO()):
                    import jionlp
                    from jionlp.gadget import time_parser
            except ImportError as exc:
                _missing = True
                log.warning("relative dates such as 上个月底 are not read: %s (%s)",
                            exc, INSTALL_HINT)
                return None
            if hasattr(time_parser, "logging"):
                time_parser.logging = _QuietLogging()
            _jionlp = jionlp
    return _jionlp


class _Budgeted:
    """A time parser that refuses (as jionlp's "cannot parse") once the budget is spent.

    jionlp's extractor catches every error of a call and tries the next
    substring, so a spent budget makes the rest of a window cheap and keeps the
    readings found before it. Only the parser's own thread CPU time is counted
    (``charge``), so other work of the turn in between does not use it up.
    """

    def __init__(self, parser: Any) -> None:
        self.parser = parser
        self.calls = 0
        self.used = 0.0
        self.deadline = 0.0

    def start(self) -> None:
        self.calls = PARSE_CALLS
        self.used = 0.0

    def open(self) -> None:
        """Before one window is read: the rest of the budget is its deadline."""
        self.deadline = time.thread_time() + max(0.0, PARSE_SECONDS - self.used)

    def charge(self, seconds: float) -> None:
        self.used += seconds

    @property
    def exhausted(self) -> bool:
        """No calls or parser time left (between windows)."""
        return self.calls <= 0 or self.used >= PARSE_SECONDS

    @property
    def spent(self) -> bool:
        """Exhausted, or this window's deadline passed (inside a window)."""
        return self.exhausted or time.thread_time() > self.deadline

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.spent:
            raise ValueError("parse budget spent")
        self.calls -= 1
        return self.parser(*args, **kwargs)


@contextlib.contextmanager
def one_message() -> Iterator[None]:
    """Everything read inside (one citizen's turn: the engine reading each clause, the
    validators checking each value) shares one parse budget, so a message of many
    clauses cannot spend the budget once per clause. Outside it, each text read has
    a budget of its own."""
    outer = getattr(_local, "shared", None)
    _local.shared = [False]  # becomes True once the budget of this message started
    try:
        yield
    finally:
        _local.shared = outer


class _Parser:
    """One thread's jionlp time extractor and parser (they keep a call's state on themselves)."""

    def __init__(self, jio: Any) -> None:
        from jionlp.algorithm.ner.time_extractor import TimeExtractor
        from jionlp.gadget.time_parser import TimeParser
        from jionlp.rule.rule_pattern import TIME_CHAR_STRING

        self.extractor = TimeExtractor()
        self.extractor._prepare()  # builds its own TimeParser, replaced by the budgeted one
        self.budget = _Budgeted(self.extractor.parse_time)
        self.extractor.parse_time = self.budget
        self.parse_time = TimeParser()
        self.runs = re.compile(TIME_CHAR_STRING)
        self.single = frozenset(self.extractor.single_char_time)
        # jionlp builds parts of itself on a first call: done here, outside any budget,
        # so a process's first date message is read as every later one is.
        warm = {"year": 2026, "month": 1, "day": 1}
        self.budget.start()
        self.budget.open()
        self.budget.deadline = float("inf")
        with contextlib.suppress(Exception):
            self.extractor("下周一", time_base=warm, with_parsing=False)
            self.parse_time("下周一", time_base=warm)


def _parser(jio: Any) -> _Parser:
    parser = getattr(_local, "parser", None)
    if parser is None:
        parser = _local.parser = _Parser(jio)
    return parser


def windows(text: str, runs: re.Pattern, single: frozenset = frozenset()
            ) -> Iterator[tuple[int, int]]:
    """The spans of ``text`` the time parser reads, each ``WINDOW_CHARS`` long at most.

    A window is a run of jionlp's time characters (the candidates its extractor
    reads) and the two characters after it, which it reads for a unit ("2000万"
    is no year). A longer run is no one expression a citizen writes: only its first
    ``LONG_RUN_PIECES`` pieces of ``PIECE_CHARS`` are read.
    """
    for m in runs.finditer(text):
        start, end = m.span()
        if end - start < 2 and m.group() not in single:
            continue  # the extractor skips one-character runs but for 春/夏/秋/冬
        if end + 2 - start > WINDOW_CHARS:
            for piece in range(start, min(end, start + LONG_RUN_PIECES * PIECE_CHARS),
                               PIECE_CHARS):
                yield piece, min(piece + PIECE_CHARS, end)
            continue
        yield start, min(end + 2, len(text))


def find(text: str, today: date) -> list[Reading]:
    """Every relative or colloquial date in ``text``, read against ``today``."""
    if text.isascii() or not _TIME_WORD.search(text):
        return []  # no word a time expression needs: spare the parser (~0.5 ms a call)
    return list(_parse(text, today))


# A message is read several times in its turn (by each date field, by a number
# field leaving its dates out), and jionlp takes 0.5-6 ms a message: the readings
# of the last few messages are kept.
@functools.lru_cache(maxsize=4)
def _parse(text: str, today: date) -> tuple[Reading, ...]:
    jio = _load()
    if jio is None:
        return ()
    parser = _parser(jio)
    base = {"year": today.year, "month": today.month, "day": today.day}
    shared = getattr(_local, "shared", None)
    if shared is None or not shared[0]:  # a budget for this text, or this turn's first
        parser.budget.start()
        if shared is not None:
            shared[0] = True
    spans: list[tuple[int, int]] = []
    seen: dict[str, list] = {}  # window text -> its entities: a repeated window is read once
    skipped = 0
    for start, end in windows(text, parser.runs, parser.single):
        window = text[start:end]
        if window not in seen:
            if parser.budget.exhausted:
                skipped += 1
                continue
            parser.budget.open()
            began = time.thread_time()
            seen[window] = _extract(parser, window, base)
            parser.budget.charge(time.thread_time() - began)
        spans += [(start + s, start + e) for s, e in seen[window]]
    if skipped:
        log.info("relative dates: parse budget spent on a %d-character message; "
                 "%d windows not read", len(text), skipped)
    spans = sorted(set(spans)) + [m.span() for m in _BARE_MONTH_PART.finditer(text)]
    read: dict[str, tuple | None] = {}
    readings = []
    for start, end in spans:
        reading = _read(parser, text, start, end, base, read)
        if reading is not None:
            readings.append(reading)
    return tuple(readings)


def _extract(parser: _Parser, window: str, base: dict) -> list[tuple[int, int]]:
    """The time expressions jionlp finds in one window, as spans of the window."""
    try:
        entities = parser.extractor(window, time_base=base, with_parsing=False)
    except Exception as exc:  # jionlp raises on some odd strings: then there is no date
        log.debug("jionlp cannot extract times from a %d-character window: %s",
                  len(window), type(exc).__name__)
        return []
    return [tuple(e["offset"]) for e in entities]


def _read(parser: _Parser, text: str, start: int, end: int, base: dict,
          read: dict[str, tuple | None]) -> Reading | None:
    """The reading of jionlp's expression at ``text[start:end]``, if it is a date."""
    raw = text[start:end]
    m = _START_WORDS.search(raw)
    if m:
        start, raw = start + m.end(), raw[m.end():]
    m = _SINCE_WORDS.search(raw)
    if m:
        end, raw = end - len(m.group()), raw[:m.start()]
    if raw not in read:  # a phrase repeated in a message is read once
        read[raw] = _meaning(parser, raw, base)
    meaning = read[raw]
    return None if meaning is None else Reading(*meaning[:2], start, end, raw, meaning[2])


def _meaning(parser: _Parser, raw: str, base: dict) -> tuple[date, date, bool] | None:
    """The first and last day ``raw`` means and whether it is a bare month or year."""
    if len(raw) < 2 or raw.isascii() or _BARE_DAY.fullmatch(raw):
        return None
    ago = _AGO.fullmatch(raw)
    if ago:
        day = _back(date(base["year"], base["month"], base["day"]), ago.group(1), ago.group(2))
        return None if day is None else (day, day, False)
    phrase = raw
    if _BARE_MONTH_PART.fullmatch(raw):
        phrase = ("本月" if raw.endswith("旬") else "本") + raw
    try:
        parsed = parser.parse_time(phrase, time_base=base)
    except Exception as exc:  # ValueError for "can not parse"; other errors on odd strings
        log.debug("jionlp cannot read a %d-character phrase: %s", len(phrase), type(exc).__name__)
        return None
    if parsed.get("type") not in ("time_point", "time_span"):
        return None  # a duration ("三个月") or a period ("每月")
    bounds = _whole_days(parsed["time"])
    if bounds is None:
        return None
    first, last = bounds
    if (last - first).days > _LONGEST_SPAN:
        return None  # "00-2019年": a range of years is no date a citizen means
    if raw.endswith(("月底", "月末")):
        first = last
    coarse = not _UNSURE_MARKS.intersection(raw) and _whole_month_or_year(first, last)
    return first, last, coarse


def _back(today: date, count: str, unit: str) -> date | None:
    """The day ``count`` ``unit``s before ``today`` ("三个月前"), or None if unreadable."""
    if count == "半":
        if unit != "年":
            return None
        months = 6
    else:
        import cn2an  # a base dependency (~80 ms to import), only needed here

        try:
            n = int(count) if count.isdigit() else int(cn2an.cn2an(count, "smart"))
        except (ValueError, KeyError, IndexError, TypeError):
            return None
        if unit in _AGO_DAYS:
            return date.fromordinal(today.toordinal() - n * _AGO_DAYS[unit])
        months = n if unit == "月" else 12 * n
    year, month0 = divmod(today.year * 12 + today.month - 1 - months, 12)
    next_month = date(year + (month0 + 1) // 12, (month0 + 1) % 12 + 1, 1)
    last_day = date.fromordinal(next_month.toordinal() - 1).day
    return date(year, month0 + 1, min(today.day, last_day))


def _whole_days(bounds: list[str]) -> tuple[date, date] | None:
    """The days of a jionlp reading made of whole days; None for open or time-of-day ones."""
    try:
        first = datetime.strptime(bounds[0], "%Y-%m-%d %H:%M:%S")
        last = datetime.strptime(bounds[1], "%Y-%m-%d %H:%M:%S")
    except (ValueError, TypeError, IndexError):
        return None  # "inf" / "-inf": an open-ended span
    if first.time() != datetime.min.time() or (last.hour, last.minute) != (23, 59):
        return None
    return first.date(), last.date()


def _whole_month_or_year(first: date, last: date) -> bool:
    if first.day != 1:
        return False
    after = date.fromordinal(last.toordinal() + 1)
    whole_month = (first.year, first.month) == (last.year, last.month) and after.day == 1
    whole_year = (first.month, last.month, last.day) == (1, 12, 31) and first.year == last.year
    return whole_month or whole_year
