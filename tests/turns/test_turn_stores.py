"""The turn store contract, identical for memory, SQLite and Redis."""

from __future__ import annotations

from datetime import timedelta

import pytest

from si_agent.audit import AuditLog, MemoryAuditStore
from si_agent.audit.model import utc_now
from si_agent.config.settings import Settings
from si_agent.errors import UnknownBackendError
from si_agent.turns import Feedback, Review, TurnEvent, TurnLog, create_turn_store


def event(conversation: str, turn: int, *, age: timedelta = timedelta(0), **extra) -> TurnEvent:
    return TurnEvent(at=utc_now() - age, conversation=conversation, user="u" * 16, turn=turn,
                     state_before="idle", state_after="collecting", **extra)


def test_records_come_back_per_conversation_oldest_first(store):
    store.append(event("a", 1, business="card_apply", input="我要办社保卡"))
    store.append(event("b", 1))
    store.append(event("a", 2))
    store.append(Feedback(conversation="a", turn=2, rating="down", reason="没听懂"))
    store.append(Review(conversation="a", turn=1, actor="张三", note="不该问这个"))
    records = store.conversation("a")
    assert [(r.kind, r.turn) for r in records] == [
        ("turn", 1), ("turn", 2), ("feedback", 2), ("review", 1)]
    assert records[0].business == "card_apply" and records[0].input == "我要办社保卡"
    assert records[2].reason == "没听懂" and records[3].actor == "张三"
    assert all(r.id for r in records) and len({r.id for r in records}) == 4
    assert store.conversation("nothing") == []


def test_recent_lists_the_most_recently_active_first(store):
    store.append(event("old", 1, age=timedelta(hours=30)))
    store.append(event("a", 1, age=timedelta(hours=3)))
    store.append(event("b", 1, age=timedelta(hours=2)))
    store.append(event("a", 2, age=timedelta(hours=1)))
    assert store.recent() == ["a", "b", "old"]
    assert store.recent(since=utc_now() - timedelta(hours=10)) == ["a", "b"]
    assert store.recent(limit=1) == ["a"]


def test_purge_drops_what_is_older_than_the_cutoff(store):
    store.append(event("old", 1, age=timedelta(days=100)))
    store.append(event("new", 1, age=timedelta(days=1)))
    store.purge(utc_now() - timedelta(days=90))
    assert store.recent() == ["new"]
    assert store.conversation("old") == []


def test_the_log_applies_its_retention_when_it_appends(store):
    store.append(event("old", 1, age=timedelta(days=31)))
    turns = TurnLog(store, AuditLog(MemoryAuditStore(), pepper="p" * 16), retention_days=30)
    turns.store.append(event("kept", 1, age=timedelta(days=29)))
    turns._maybe_purge()
    assert store.recent() == ["kept"]


def test_feedback_and_reviews_join_their_turns(store):
    turns = TurnLog(store, AuditLog(MemoryAuditStore(), pepper="p" * 16))
    store.append(event("c", 1))
    store.append(event("c", 2))
    turns.feedback("c", 2, "up")
    turns.feedback("c", 2, "down", "我的电话13812345678打不通")  # the newest counts, masked
    turns.review("c", 1, "张三", note="应当先问城市")
    c = turns.conversation("c")
    assert c.turn(2).feedback.rating == "down"
    assert c.turn(2).feedback.reason == "我的电话138****5678打不通"
    assert c.ratings == {"up": 0, "down": 1} and c.marked == 1
    turns.review("c", 1, "张三", wrong=False)
    assert turns.conversation("c").marked == 0
    assert turns.conversation("nothing") is None


def test_an_unknown_store_name_lists_the_valid_ones(tmp_path):
    with pytest.raises(UnknownBackendError) as err:
        create_turn_store(Settings(data_dir=tmp_path, turn_store="nope"))
    assert "sqlite" in str(err.value) and "redis" in str(err.value)
    assert create_turn_store(Settings(data_dir=tmp_path, turn_store="sqlite")).name == "sqlite"


def test_the_memory_store_keeps_the_newest_records_only():
    from si_agent.turns import MemoryTurnStore

    store = MemoryTurnStore(max_records=3)
    for n in range(5):
        store.append(event(f"c{n}", 1))
    assert store.recent() == ["c4", "c3", "c2"]


def test_several_conversations_at_once(store):
    store.append(event("a", 1))
    store.append(event("b", 1))
    store.append(event("a", 2))
    found = store.conversations(["a", "b", "none"])
    assert [r.turn for r in found["a"]] == [1, 2] and [r.turn for r in found["b"]] == [1]
    assert found["none"] == []
