"""The SessionStore contract, run against every backend (see conftest.backend)."""

from __future__ import annotations

import logging
import time

import pytest

from si_agent.errors import SessionConflict
from si_agent.session import SessionStore
from si_agent.session.model import (
    DecisionRecord,
    FieldState,
    Produced,
    Session,
    ToolCallRecord,
)

ID_NUMBER = "11010519491231002X"


def rich_session(session_id: str = "wx-张三-001") -> Session:
    session = Session(
        session_id=session_id,
        state="collecting",
        business_id="pension_certificate",
        fields={
            "id_number": FieldState(value=ID_NUMBER, status="collected", attempts=1),
            "name": FieldState(value="张三", status="collected"),
            "phone": FieldState(
                value="1380013800", status="invalid", attempts=2, error="too short"
            ),
            "months": FieldState(value=36, status="collected"),
            "address": FieldState(value={"city": "北京", "lines": ["朝阳区", "1号"]}),
            "bank_card": FieldState(),
        },
        awaiting="phone",
        produced={"name": Produced(value="张三", step="id_card_photo")},
        job_id="job-1",
        step_attempts=1,
        step_data={"receipt": {"no": "A-1", "amount": 12.5}, "flags": [True, None]},
        suggestion="您是要办理养老金资格认证吗？",
        result={"ok": True, "ticket": 42},
        flow_nonce="n-123",
        turn=7,
    )
    session.remember("user", "我要开养老证明")
    session.remember("assistant", "请提供身份证号")
    session.record(
        DecisionRecord(
            turn=7,
            input="我要开养老证明",
            engine="rules",
            state_before="idle",
            state_after="collecting",
            calls=[
                ToolCallRecord(
                    name="start_business",
                    arguments={"business_id": "pension_certificate"},
                    detail="ok",
                )
            ],
            reason="keyword",
        )
    )
    return session


def test_store_satisfies_protocol(backend):
    store = backend.make()
    assert isinstance(store, SessionStore)
    assert store.name == backend.name
    assert store.ping() is True


def test_load_missing_returns_none(backend):
    assert backend.make().load("nobody") is None


def test_round_trip_of_a_rich_session(backend):
    store = backend.make()
    session = rich_session()
    session.updated_at = 0.0
    before = time.time()

    store.save(session)

    assert session.version == 1
    assert session.updated_at >= before
    loaded = store.load(session.session_id)
    assert loaded is not None and loaded is not session
    assert loaded.model_dump() == session.model_dump()
    assert loaded.history[0].text == "我要开养老证明"
    assert loaded.memory[0].calls[0].arguments == {"business_id": "pension_certificate"}
    assert loaded.fields["address"].value == {"city": "北京", "lines": ["朝阳区", "1号"]}


def test_caller_mutations_after_save_do_not_reach_the_store(backend):
    store = backend.make()
    session = rich_session()
    store.save(session)

    session.fields["name"].value = "李四"
    session.history.clear()

    loaded = store.load(session.session_id)
    assert loaded is not None
    assert loaded.fields["name"].value == "张三"
    assert len(loaded.history) == 2


def test_versions_increment_on_each_save(backend):
    store = backend.make()
    session = Session(session_id="s1")
    for expected in (1, 2, 3):
        stamp = session.updated_at
        time.sleep(0.002)
        store.save(session)
        assert session.version == expected
        assert session.updated_at > stamp
    loaded = store.load("s1")
    assert loaded is not None
    assert loaded.version == 3
    assert loaded.updated_at == session.updated_at


def test_stale_save_conflicts_and_stores_nothing(backend):
    store = backend.make()
    store.save(Session(session_id="s1"))
    first = store.load("s1")
    second = store.load("s1")
    assert first is not None and second is not None

    first.state = "collecting"
    store.save(first)
    second.state = "escalated"
    second.turn = 99
    stamp = second.updated_at

    with pytest.raises(SessionConflict) as caught:
        store.save(second)

    assert (caught.value.session_id, caught.value.expected, caught.value.found) == ("s1", 1, 2)
    assert second.version == 1 and second.updated_at == stamp  # caller's object untouched
    stored = store.load("s1")
    assert stored is not None
    assert (stored.version, stored.state, stored.turn) == (2, "collecting", 0)


def test_saving_a_fresh_session_over_an_existing_one_conflicts(backend):
    store = backend.make()
    store.save(Session(session_id="s1", state="collecting"))
    with pytest.raises(SessionConflict) as caught:
        store.save(Session(session_id="s1"))
    assert (caught.value.expected, caught.value.found) == (0, 1)
    assert store.load("s1").state == "collecting"


def test_save_with_a_version_but_no_record_conflicts(backend):
    store = backend.make()
    with pytest.raises(SessionConflict) as caught:
        store.save(Session(session_id="ghost", version=3))
    assert (caught.value.expected, caught.value.found) == (3, 0)
    assert store.load("ghost") is None


def test_delete(backend):
    store = backend.make()
    session = Session(session_id="s1")
    store.save(session)
    store.save(Session(session_id="s2"))

    store.delete("s1")
    store.delete("never-existed")

    assert store.load("s1") is None
    assert store.load("s2") is not None
    with pytest.raises(SessionConflict) as caught:
        store.save(session)  # version 1, but the record is gone
    assert caught.value.found == 0
    fresh = Session(session_id="s1")
    store.save(fresh)
    assert fresh.version == 1


def test_ttl_expiry_and_refresh_on_save(backend):
    store = backend.make(ttl=1)
    session = Session(session_id="short-lived")
    store.save(session)
    time.sleep(0.5)
    store.save(session)  # refreshes the TTL
    time.sleep(0.6)  # 1.1 s after the first save, 0.6 s after the second
    kept = store.load("short-lived")
    assert kept is not None and kept.version == 2

    time.sleep(1.2)

    assert store.load("short-lived") is None
    with pytest.raises(SessionConflict) as caught:
        store.save(session)  # an expired record counts as missing
    assert caught.value.found == 0
    fresh = Session(session_id="short-lived")
    store.save(fresh)
    assert fresh.version == 1


@pytest.mark.parametrize(
    "bad_data",
    [
        pytest.param('{"session_id": "wx-张三-001", "fields": {"id', id="broken-json"),
        pytest.param(
            '{"session_id": "wx-张三-001", "turn": "many", "fields": {"id_number": '
            f'{{"value": "{ID_NUMBER}", "status": "bogus"}}}}}}',
            id="invalid-session",
        ),
        pytest.param(
            f'{{"session_id": "someone-else", "state": "{ID_NUMBER}"}}', id="other-session"
        ),
    ],
)
def test_corrupt_record_is_logged_and_treated_as_missing(backend, caplog, bad_data):
    store = backend.make()
    session = rich_session()
    store.save(session)
    backend.corrupt(store, session.session_id, bad_data)

    with caplog.at_level(logging.WARNING, logger="si_agent.session"):
        assert store.load(session.session_id) is None

    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1
    assert "unreadable" in warnings[0].getMessage()
    assert ID_NUMBER not in caplog.text
    assert session.session_id not in caplog.text
    assert "张三" not in caplog.text
    # Treated as missing: a fresh session can take its place (no endless conflict).
    assert store.load(session.session_id) is None
    fresh = Session(session_id=session.session_id)
    store.save(fresh)
    assert fresh.version == 1
    assert store.load(session.session_id) is not None
