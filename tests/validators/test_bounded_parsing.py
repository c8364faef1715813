"""Bounded parsing: a long or repetitive message costs the time parser little, and no lock.

These tests assert the bounds structurally (what the parser is given, how often
it is called, that two threads parse at once); the CPU times are measured by
``scripts/bench_hostile.py``.
"""

from __future__ import annotations

import threading
from datetime import date

import pytest

from si_agent.validators import check, extract, relative_dates

pytest.importorskip("jionlp")
from jionlp.algorithm.ner.time_extractor import TimeExtractor  # noqa: E402
from jionlp.gadget.time_parser import TimeParser  # noqa: E402

TODAY = date(2026, 12, 1)  # a Tuesday: 下周一 is 2026-12-07
LIMIT = 2000  # the API's max_message_chars
WINDOW = 40  # the longest text the time parser may be given
CALLS = 400  # parser calls a message may cost, with room for the few phrases read after


class _TooMany(BaseException):
    """Stops a parser that is called without bound (jionlp catches every Exception)."""


@pytest.fixture(autouse=True)
def fresh_readings():
    relative_dates._parse.cache_clear()
    yield
    relative_dates._parse.cache_clear()


@pytest.fixture
def extractor_inputs(monkeypatch):
    """The length of every text jionlp's time extractor is given."""
    seen: list[int] = []
    real = TimeExtractor.__call__

    def spy(self, text, *args, **kwargs):
        seen.append(len(text))
        if len(text) > WINDOW:
            return []  # would take minutes: the length is what this test checks
        return real(self, text, *args, **kwargs)

    monkeypatch.setattr(TimeExtractor, "__call__", spy)
    return seen


@pytest.fixture
def parser_calls(monkeypatch):
    """How many times jionlp's time parser is called (at most a few thousand)."""
    calls = [0]
    real = TimeParser.__call__

    def counting(self, *args, **kwargs):
        calls[0] += 1
        if calls[0] > 10 * CALLS:
            raise _TooMany
        return real(self, *args, **kwargs)

    monkeypatch.setattr(TimeParser, "__call__", counting)
    return calls


HOSTILE = [
    pytest.param("下周一" * (LIMIT // 3), id="下周一-repeated"),
    pytest.param("明天" * (LIMIT // 2), id="明天-repeated"),
    pytest.param("上个月底的工作" * (LIMIT // 7), id="phrase-repeated"),
    pytest.param("2024年3月5日" * (LIMIT // 9), id="absolute-repeated"),
    pytest.param("".join(f"{m}月{d}日" for m in range(1, 13) for d in range(1, 29))[:LIMIT],
                 id="all-different-dates"),
]


@pytest.mark.parametrize("text", HOSTILE)
def test_the_time_parser_reads_only_short_windows(extractor_inputs, text):
    relative_dates.find(text, TODAY)
    assert extractor_inputs, "the extractor was not called"
    assert max(extractor_inputs) <= WINDOW


@pytest.mark.parametrize("text", HOSTILE)
def test_a_long_message_costs_a_bounded_number_of_parser_calls(parser_calls, text):
    try:
        relative_dates.find(text, TODAY)
    except _TooMany:
        pytest.fail(f"more than {10 * CALLS} time parser calls for one message")
    assert parser_calls[0] <= CALLS


def test_a_normal_message_is_read_whole(extractor_inputs):
    text = "我从去年年底开始没工作了，2023年12月31日至2024年1月1日在杭州，下周一想去办理"
    readings = relative_dates.find(text, TODAY)
    assert [r.raw for r in readings] == ["去年年底", "2023年12月31日至2024年1月1日", "下周一"]
    assert max(extractor_inputs) <= WINDOW


def test_a_repeated_relative_date_still_reads_as_that_day():
    text = "下周一" * (LIMIT // 3)
    assert check("date", text, today=TODAY).value == "2026-12-07"
    found = extract("date", text, today=TODAY)
    assert found and {f.value for f in found} == {"2026-12-07"}
    assert all(f.raw == "下周一" for f in found)
    assert extract("integer", text) == []


def test_a_date_before_a_flood_is_still_found():
    text = "下周一" + "，" * (LIMIT - 3)
    assert [(f.value, f.start, f.end) for f in extract("date", text, today=TODAY)] == [
        ("2026-12-07", 0, 3)]


def test_one_thread_parsing_does_not_hold_up_another(monkeypatch):
    """A parser blocked in one thread (a citizen's slow message) leaves the others free."""
    entered, release = threading.Event(), threading.Event()
    real = TimeParser.__call__
    slow: list[threading.Thread] = []

    def blocking(self, *args, **kwargs):
        if threading.current_thread() in slow:
            entered.set()
            release.wait(60)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(TimeParser, "__call__", blocking)
    results: dict[str, list] = {}

    def run(name: str, text: str) -> None:
        results[name] = [r.raw for r in relative_dates.find(text, TODAY)]

    a = threading.Thread(target=run, args=("a", "上个月底离的职"), daemon=True)
    b = threading.Thread(target=run, args=("b", "下周一去办理"), daemon=True)
    slow.append(a)
    try:
        a.start()
        assert entered.wait(60), "the first thread never reached the parser"
        b.start()
        b.join(60)
        assert not b.is_alive(), "the second thread waited for the first one's parser"
        assert results["b"] == ["下周一"]
        assert a.is_alive()  # still blocked in its own parser
    finally:
        release.set()
        a.join(60)
    assert results["a"] == ["上个月底"]


def test_one_turn_shares_one_budget_however_many_clauses_are_read(parser_calls):
    """The consultation reads each clause of a message apart: inside ``one_message``
    (every controller turn) the clauses share one budget, not one each."""
    clauses = [f"{n}月{d}日上个月底前天" for n in range(1, 13) for d in range(1, 8)]

    def read_all():
        for clause in clauses:  # each a text of its own, as the engine reads them
            relative_dates.find(clause, TODAY)

    read_all()
    apart = parser_calls[0]
    relative_dates._parse.cache_clear()
    parser_calls[0] = 0
    with relative_dates.one_message():
        read_all()
    assert parser_calls[0] <= CALLS < apart, (parser_calls[0], apart)


def test_the_first_message_of_a_process_is_read_like_the_rest():
    """jionlp builds parts of itself on its first call: that happens when a thread's
    parser is made, outside the budget, so the first reading is not cut short."""
    import threading

    text = "我是下周一入职的，上个月底离职"
    out: list = []
    worker = threading.Thread(target=lambda: out.append(
        [r.raw for r in relative_dates.find(text, TODAY)]))  # a new thread: a new parser
    worker.start()
    worker.join(60)
    relative_dates._parse.cache_clear()
    assert out == [[r.raw for r in relative_dates.find(text, TODAY)]]
    assert out[0] == ["下周一", "上个月底"]
