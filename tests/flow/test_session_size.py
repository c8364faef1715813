"""A session's size is bounded however long the dialogue (si_agent.session.model)."""

from __future__ import annotations

import itertools

from si_agent.session.model import (
    HISTORY_TURNS,
    MEMORY_RECORDS,
    MESSAGE_CHARS,
    RECORD_CHARS,
    SESSION_BOUND_CHARS,
    TRANSCRIPT_MESSAGES,
    DecisionRecord,
    Session,
    ToolCallRecord,
)

ZHANG_WEI = "330122196303150178"
TRANSFER = ["我要转社保", "从杭州转到苏州", ZHANG_WEI, "张伟", "确认"]
# The longest message a citizen may send (max_message_chars), in Chinese: 3 bytes a character.
LONG = ("我想问一下社保转移需要多长时间，" * 200)[:2000]


def test_a_very_long_dialogue_keeps_the_session_under_the_bound(controller):
    messages = itertools.chain.from_iterable(
        [*TRANSFER, LONG, "查养老金", ZHANG_WEI, "你好"] for _ in range(40))
    largest = 0
    states = set()
    for message in messages:
        turn = controller.handle("u", message)
        states.add(turn.state)
        session = controller.store.load("u")
        largest = max(largest, len(session.model_dump_json()))
        assert len(session.history) <= 2 * HISTORY_TURNS
        assert len(session.records) <= MEMORY_RECORDS
        assert all(len(r) <= RECORD_CHARS for r in session.records)
        assert all(len(m.text) <= MESSAGE_CHARS for m in session.history)
        assert len(session.transcript) <= TRANSCRIPT_MESSAGES
        assert all(len(m.text) <= MESSAGE_CHARS for m in session.transcript)
        assert ZHANG_WEI not in session.model_dump_json(include={"transcript"})
    assert session.turn == 40 * 9
    assert "done" in states  # the dialogues really ran to their end, again and again
    assert largest <= SESSION_BOUND_CHARS
    # The records are still readable and the last one describes the last turn.
    assert session.memory[-1].turn == session.turn


def test_an_oversized_record_keeps_its_outline():
    session = Session(session_id="u")
    huge = ToolCallRecord(name="provide_field", arguments={"values": {"address": "很长" * 3000}},
                          detail="collected=['address']" * 100)
    session.record(DecisionRecord(turn=7, input="地址" * 2000, engine="llm",
                                  state_before="collecting", state_after="collecting",
                                  calls=[huge] * 5, rule="values", reason="长" * 5000))
    assert len(session.records[0]) <= RECORD_CHARS
    record = session.memory[0]
    assert (record.turn, record.engine, record.rule) == (7, "llm", "values")
    assert record.input.startswith("地址地址")
    assert len(record.input) < 2000

    session.remember("user", "字" * 10_000)
    assert session.history[-1].text == "字" * MESSAGE_CHARS
    session.show("assistant", "答" * 10_000)
    assert session.transcript[-1].text == "答" * (MESSAGE_CHARS - 1) + "…"
