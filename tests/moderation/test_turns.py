"""Moderation in turns: citizens' messages before the engine and any model, replies
before the citizen sees them (rules and model mode, the API's event stream)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from si_agent import replies
from si_agent.config.loader import load_businesses
from si_agent.config.settings import Settings
from si_agent.engine.llm import LLMEngine
from si_agent.engine.rules import RuleEngine
from si_agent.executor import Executors
from si_agent.flow.controller import Controller
from si_agent.moderation import create_moderation
from si_agent.server import create_app
from si_agent.session import MemoryStore

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def catalog():
    return load_businesses(ROOT / "businesses")


@pytest.fixture
def settings(tmp_path) -> Settings:
    return Settings(business_dir=ROOT / "businesses", knowledge="none", data_dir=tmp_path,
                    session_store="memory", rate_limit="1000 per minute")


def _controller(catalog, settings, engine=None) -> Controller:
    return Controller(catalog, MemoryStore(), engine or RuleEngine(catalog), Executors(settings),
                      moderation=create_moderation(settings, catalog))


def _moderation_entries(ctl):
    return [e for e in ctl.audit.query() if e.event == "moderation"]


def test_a_refused_message_is_not_used_and_changes_nothing(catalog, settings):
    ctl = _controller(catalog, settings)
    ctl.handle("u", "我要申领社保卡")
    before = ctl.handle("u", "张伟")
    stored = ctl.store.load("u")
    turn = ctl.handle("u", "约炮吗")
    assert turn.reply == replies.INPUT_REFUSED
    assert turn.state == before.state == "collecting" and turn.awaiting == before.awaiting
    after = ctl.store.load("u")
    assert after.model_dump() == stored.model_dump()  # nothing stored: not even the message
    (entry,) = _moderation_entries(ctl)
    assert (entry.outcome, entry.detail, entry.business) == ("refuse", "input: porn", "card_apply")
    assert "约炮" not in entry.model_dump_json()
    assert ctl.handle("u", "330122196303150178").awaiting == "phone"  # the business goes on


def test_a_citizen_in_distress_gets_care_and_the_business_waits(catalog, settings):
    ctl = _controller(catalog, settings)
    ctl.handle("u", "我要申领社保卡")
    stored = ctl.store.load("u")
    turn = ctl.handle("u", "我想自杀")
    assert "12356" in turn.reply and turn.awaiting == "name"
    assert ctl.store.load("u").model_dump() == stored.model_dump()  # not a failed attempt
    (entry,) = _moderation_entries(ctl)
    assert (entry.outcome, entry.detail) == ("refuse", "input: self_harm")


def test_a_masked_message_goes_on_masked(catalog, settings):
    ctl = _controller(catalog, settings)
    turn = ctl.handle("u", "王八蛋，我要挂失社保卡")
    assert turn.business is not None and turn.business.id == "card_loss"
    assert turn.message == "＊＊＊，我要挂失社保卡"
    session = ctl.store.load("u")
    said = [m.text for m in session.transcript if m.role == "user"]
    assert said == ["＊＊＊，我要挂失社保卡"]
    assert all("王八" not in m.text for m in session.history)
    (entry,) = _moderation_entries(ctl)
    assert (entry.outcome, entry.detail) == ("mask", "input: abuse")


def test_a_flagged_message_is_answered_and_recorded_for_review(catalog, settings):
    ctl = _controller(catalog, settings)
    turn = ctl.handle("u", "我要查养老金，有人说办假证能多领")
    assert turn.reply != replies.INPUT_REFUSED and turn.business.id == "pension_query"
    (entry,) = _moderation_entries(ctl)
    assert (entry.outcome, entry.detail) == ("flag", "input: fraud")


def test_without_moderation_nothing_is_checked(catalog, settings):
    ctl = Controller(catalog, MemoryStore(), RuleEngine(catalog), Executors(settings))
    assert ctl.handle("u", "约炮吗").reply != replies.INPUT_REFUSED
    off = create_moderation(settings.replace(moderation="off"), catalog)
    assert not off.active and off.check("约炮吗", "input").clean


def test_model_mode_input_never_reaches_the_model(catalog, settings, fake):
    settings = settings.replace(llm_base_url=fake.base_url, llm_timeout=1.0, llm_max_retries=0)
    ctl = _controller(catalog, settings, LLMEngine(catalog, settings))
    turn = ctl.handle("u", "约炮吗")
    assert turn.reply == replies.INPUT_REFUSED and fake.requests == []
    fake.push({"content": "您好，请问有什么可以帮您？"})
    ctl.handle("u", "你们这傻逼系统能干啥")
    assert "傻逼" not in json.dumps(fake.requests, ensure_ascii=False)
    assert "＊＊" in fake.requests[-1]["messages"][-1]["content"]


def test_model_mode_reply_is_masked_while_it_streams(catalog, settings, fake):
    settings = settings.replace(llm_base_url=fake.base_url, llm_timeout=2.0, llm_max_retries=0)
    ctl = _controller(catalog, settings, LLMEngine(catalog, settings))
    fake.push({"content": "这个王八蛋政策是这样的：灵活就业人员可以按月或按年缴纳养老保险，"
                          "缴费基数在当地规定的上下限之间自选。"})
    pieces: list[str] = []
    turn = ctl.handle("u", "灵活就业怎么交养老保险", on_delta=pieces.append)
    streamed = "".join(pieces)
    assert pieces and "王八" not in streamed and "王八蛋" not in turn.reply
    assert "＊＊＊政策" in turn.reply and turn.reply.startswith(streamed)
    (entry,) = _moderation_entries(ctl)
    assert (entry.outcome, entry.detail) == ("mask", "output: abuse")


def test_model_mode_refused_reply_is_replaced(catalog, settings, fake):
    settings = settings.replace(llm_base_url=fake.base_url, llm_timeout=2.0, llm_max_retries=0)
    ctl = _controller(catalog, settings, LLMEngine(catalog, settings))
    fake.push({"content": "可以去这个黄色网站看看"})
    turn = ctl.handle("u", "随便聊聊", on_delta=lambda _: None)
    assert turn.reply.startswith("抱歉，这条回复没有通过内容检查") and "黄色" not in turn.reply
    session = ctl.store.load("u")
    assert all("黄色" not in m.text for m in [*session.history, *session.transcript])


def test_the_event_stream_never_sends_a_listed_word(settings, fake):
    app = create_app(settings.replace(engine="llm", llm_base_url=fake.base_url,
                                      llm_timeout=2.0, llm_max_retries=0))
    client = app.test_client()
    token = client.post("/api/token", json={"user_id": "eve"}).get_json()["access_token"]
    headers = {"Authorization": f"Bearer {token}", "Accept": "text/event-stream"}
    fake.push({"content": "说实话这破规定王八蛋都看不懂，失业保险金一般按月发放，最长领取24个月。"})
    res = client.post("/api/chat", json={"message": "失业金最多能领多久啊"}, headers=headers)
    body = res.get_data(as_text=True)
    events = [(block.split("\n")[0][7:], json.loads(block.split("\n")[1][6:]))
              for block in body.strip().split("\n\n")]
    deltas = "".join(d["text"] for e, d in events if e == "delta")
    assert "王八" not in body
    final = events[-1][1]
    assert events[-1][0] == "turn" and final["reply"] == deltas  # no reset: held back in time
    assert "＊＊＊都看不懂" in final["reply"]
