"""The turn-event record written by real dialogues: what each event holds, and that a
citizen's ID number, phone, bank card and name never reach it, in every backend."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest

from si_agent.audit import AuditLog, MemoryAuditStore
from si_agent.audit.model import utc_now
from si_agent.config.loader import load_businesses
from si_agent.config.settings import Settings
from si_agent.engine.rules import RuleEngine
from si_agent.executor import Executors
from si_agent.flow.controller import Controller
from si_agent.session import MemoryStore
from si_agent.turns import TurnEvent, TurnLog, create_turn_log

ROOT = Path(__file__).resolve().parents[2]
ID, PHONE, CARD, NAME = "320102198809150628", "13800138005", "6013820800012345672", "陈静"
# The unemployment benefit, the values typed the way people type them.
DIALOGUE = ("我失业了，想领失业金", f"我的身份证是 {ID[:6]} {ID[6:14]} {ID[14:]}", f"我叫{NAME}",
            "手机 138 0013 8005", "2025年6月30日", "被辞退",
            f"卡号{CARD[:4]} {CARD[4:8]} {CARD[8:12]} {CARD[12:16]} {CARD[16:]}", "确认")
RAW = (ID, PHONE, CARD, NAME, "0013 8005", "138 0013", ID[6:14], CARD[4:8] + " " + CARD[8:12])


@pytest.fixture
def settings(tmp_path) -> Settings:
    return Settings(business_dir=ROOT / "businesses", data_dir=tmp_path, knowledge="none")


def controller_with(settings: Settings, turns_store: str, **changes) -> Controller:
    catalog = load_businesses(settings.business_dir)
    audit = AuditLog(MemoryAuditStore(), pepper="pepper-of-the-turn-tests")
    turns = create_turn_log(settings.replace(turn_store=turns_store, **changes), None, audit)
    return Controller(catalog, MemoryStore(), RuleEngine(catalog), Executors(settings),
                      audit=audit, turns=turns)


@pytest.fixture(params=["memory", "sqlite", pytest.param("redis", marks=pytest.mark.redis)])
def controller(request, settings) -> Controller:
    if request.param != "redis":
        return controller_with(settings, request.param)
    prefix = request.getfixturevalue("redis_prefix")
    return controller_with(settings, "redis", redis_url=request.getfixturevalue("redis_url"),
                           redis_prefix=prefix + "session:")


def test_each_turn_is_recorded_masked_with_its_decision_fields_and_outcome(controller):
    for text in DIALOGUE:
        turn = controller.handle("citizen-1", text)
    assert turn.state == "done"
    [conversation] = controller.turns.recent()
    events = [t.event for t in conversation.turns]
    assert [e.turn for e in events] == list(range(1, len(DIALOGUE) + 1))
    first, id_turn, name_turn, phone_turn, *_, card_turn, last = events
    assert (first.state_before, first.state_after, first.business) == (
        "idle", "collecting", "unemployment_benefit")
    assert first.calls[0].name == "match_business" and first.rule != "none"
    assert id_turn.input == "我的身份证是 3201**********0628"
    assert [(f.key, f.value, f.status) for f in id_turn.fields] == [
        ("id_number", "3201**********0628", "collected")]
    assert id_turn.input_spans[0].kind == "idcard" and id_turn.input_spans[0].field == "id_number"
    assert name_turn.input == "我叫陈*" and name_turn.fields[0].value == "陈*"
    assert phone_turn.input == "手机 138****8005"
    assert card_turn.fields[0].value == "6013***********5672"
    assert 0 < id_turn.confidence <= 1 and id_turn.latency_ms >= 0
    assert last.outcome == "done" and last.job.status == "succeeded"
    assert last.job.application_no and conversation.outcome == "done"
    assert conversation.user == controller.audit.user_ref("citizen-1")[:16]
    stored = json.dumps([r.model_dump(mode="json") for r in
                         controller.turns.store.conversation(conversation.id)],
                        ensure_ascii=False)
    for raw in RAW:
        assert raw not in stored, raw
    assert "citizen-1" not in stored


def test_nothing_personal_reaches_the_sqlite_file(settings):
    controller = controller_with(settings, "sqlite")
    for text in DIALOGUE:
        controller.handle("citizen-2", text)
    controller.turns.feedback(controller.turns.recent()[0].id, 2, "down",
                              f"为什么要我的身份证{ID}和电话{PHONE}")
    data = b"".join(p.read_bytes() for p in settings.data_dir.glob("turns.db*"))
    assert data.count(b"unemployment_benefit") >= len(DIALOGUE)
    for raw in RAW[:4]:
        assert raw.encode() not in data, raw


def test_cancel_handoff_and_unanswered_questions(settings):
    controller = controller_with(settings, "memory")
    for text in ("我要挂失社保卡", "算了不办了"):
        controller.handle("c1", text)
    controller.handle("c2", "我要找人工")
    controller.handle("c3", "生育津贴怎么算的")
    by_user = {c.user: c for c in controller.turns.recent()}
    ref = lambda u: controller.audit.user_ref(u)[:16]  # noqa: E731
    assert by_user[ref("c1")].outcome == "cancelled"
    assert by_user[ref("c2")].outcome == "handed_off"
    asked = by_user[ref("c3")]
    assert asked.outcome is None and asked.unanswered == 1
    assert asked.turns[0].event.knowledge[0].outcome == "unanswered"


def test_a_new_session_is_a_new_conversation(settings):
    controller = controller_with(settings, "memory")
    controller.handle("c1", "我要挂失社保卡")
    controller.reset("c1")
    controller.handle("c1", "你好")
    first, second = controller.turns.recent()
    assert first.id != second.id and first.user == second.user
    assert [t.event.turn for t in first.turns] == [1]


def test_retention_setting_is_read_and_enforced(settings, tmp_path):
    audit = AuditLog(MemoryAuditStore(), pepper="p" * 16)
    turns = create_turn_log(Settings.from_env({"SI_TURN_RETENTION_DAYS": "7",
                                               "SI_DATA_DIR": str(tmp_path),
                                               "SI_TURN_STORE": "sqlite"}), None, audit)
    assert isinstance(turns, TurnLog) and turns.retention == timedelta(days=7)
    turns.store.append(TurnEvent(at=utc_now() - timedelta(days=8), conversation="old",
                                 user="u" * 16, turn=1, state_before="idle", state_after="idle"))
    controller = controller_with(settings, "memory")
    controller.turns = turns
    controller.handle("new", "我要挂失社保卡")  # the turn that appends also purges
    assert [c.user for c in turns.recent()] == [audit.user_ref("new")[:16]]
