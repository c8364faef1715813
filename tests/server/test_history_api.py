"""``GET /api/session/history``: what a page loaded again shows, from the server.

The session keeps the last messages as the page showed them: the citizen's with ID,
phone and bank card numbers masked (never raw, in the store either), the replies as
they were, bounded, readable only with the citizen's own token.
"""

from __future__ import annotations

import json

import pytest

from si_agent.config.loader import load_businesses
from si_agent.config.model import Api
from si_agent.engine.rules import RuleEngine
from si_agent.executor import Executors
from si_agent.flow.controller import Controller
from si_agent.server import create_app
from si_agent.session import MemoryStore
from si_agent.session.model import MESSAGE_CHARS, TRANSCRIPT_MESSAGES
from si_agent.testing.portal import SlowPortal

from .conftest import ROOT
from .test_jobs_api import ID, NUMBER, sse, wait_for

PHONE = "13800138000"
CARD = "6222021234567890123"


def chat(client, headers, message):
    res = client.post("/api/chat", json={"message": message}, headers=headers)
    assert res.status_code == 200, res.get_json()
    return res.get_json()


def history(client, headers):
    res = client.get("/api/session/history", headers=headers)
    assert res.status_code == 200
    return res.get_json()


def test_the_conversation_comes_back_masked_as_it_was_shown(app, client, login):
    headers = login("alice")
    turns = [chat(client, headers, text) for text in
             ("我要转社保", "从杭州转到苏州", f"身份证{ID}，电话{PHONE}")]
    body = history(client, headers)
    messages = body["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant"] * 3
    assert [m["text"] for m in messages[1::2]] == [t["reply"] for t in turns]
    assert messages[0]["text"] == "我要转社保"
    assert messages[4]["text"] == "身份证3301**********0178，电话138****8000"
    # The turn object says how the page shows the message: the same text.
    assert turns[2]["message"] == messages[4]["text"]
    assert all(m["at"] <= messages[-1]["at"] for m in messages)
    assert 0 <= body["idle_seconds"] < 60
    # Never raw: not in the answer, not in what the store keeps of the transcript.
    stored = app.config["SI_CONTROLLER"].store.load("alice")
    assert ID not in json.dumps(body) and PHONE not in json.dumps(body)
    assert ID not in stored.model_dump_json(include={"transcript"})


def test_numbers_the_page_alone_would_not_mask_are_masked_too(client, login):
    headers = login("bob")
    turn = chat(client, headers, f"卡号{CARD}，身份证 3301 2219 6303 1501 78")
    assert turn["message"] == "卡号6222****0123，身份证 3301**********0178"
    assert history(client, headers)["messages"][0]["text"] == turn["message"]


def test_a_session_without_turns_has_no_history(client, login):
    assert history(client, login("carol")) == {"messages": [], "idle_seconds": None}


def test_another_citizen_sees_only_their_own(client, login):
    alice, mallory = login("alice"), login("mallory")
    chat(client, alice, f"我要转社保，身份证{ID}")
    assert history(client, mallory)["messages"] == []
    chat(client, mallory, "你好")
    assert [m["text"] for m in history(client, mallory)["messages"]][0] == "你好"
    assert len(history(client, alice)["messages"]) == 2


def test_without_a_valid_token_nothing_is_read(client, login):
    chat(client, login("alice"), "我要转社保")
    assert client.get("/api/session/history").status_code == 401
    forged = {"Authorization": "Bearer not.a.token"}
    assert client.get("/api/session/history", headers=forged).status_code == 401


def test_the_history_is_bounded(client, login):
    headers = login("dave")
    long = ("我想问一下社保转移需要多长时间，" * 200)[:2000]
    for i in range(TRANSCRIPT_MESSAGES):
        chat(client, headers, long if i % 5 == 0 else f"第{i}句")
    messages = history(client, headers)["messages"]
    assert len(messages) == TRANSCRIPT_MESSAGES
    assert all(len(m["text"]) <= MESSAGE_CHARS for m in messages)
    # The newest are kept: the last message sent is the last but one.
    assert messages[-2]["text"] == f"第{TRANSCRIPT_MESSAGES - 1}句"


def test_starting_again_forgets_the_history(client, login):
    headers = login("erin")
    chat(client, headers, "我要转社保")
    assert client.delete("/api/session", headers=headers).status_code == 200
    assert history(client, login("erin"))["messages"] == []


@pytest.fixture
def portal():
    portal = SlowPortal("slow_portal", NUMBER, "正在填写表单…", timeout=20)
    yield portal
    portal.release.set()


@pytest.fixture
def slow_client(settings, portal):
    """The app with social_transfer on a long-running executor the test releases."""
    catalog = load_businesses(ROOT / "businesses")
    catalog["social_transfer"] = catalog["social_transfer"].model_copy(update={"api": Api(
        kind="slow_portal", result_template="已在网上办事大厅提交，受理编号：{application_no}。")})
    executors = Executors(settings, executors={"slow_portal": portal})
    controller = Controller(catalog, MemoryStore(), RuleEngine(catalog), executors)
    yield create_app(settings, controller=controller).test_client()
    executors.close()


def test_a_slow_submission_shows_its_queued_note_and_outcome_again(slow_client, portal):
    client = slow_client
    token = client.post("/api/token", json={"user_id": "slow"}).get_json()["access_token"]
    headers = {"Authorization": f"Bearer {token}"}
    for text in ("我要转社保", "从杭州转到苏州", ID, "张伟"):
        chat(client, headers, text)
    turn = chat(client, headers, "确认")
    assert turn["state"] == "executing"
    # What the page showed, "申请已提交，正在办理" included, is what it shows again.
    assert history(client, headers)["messages"][-1]["text"] == turn["reply"]

    portal.release.set()
    wait_for(lambda: client.get("/api/session", headers=headers).get_json()["state"] != "executing")
    events = sse(client.get("/api/session/events", headers=headers).get_data(as_text=True))
    outcome = events[-1][1]["reply"]
    assert NUMBER in outcome
    messages = history(client, headers)["messages"]
    assert (messages[-1]["role"], messages[-1]["text"]) == ("assistant", outcome)
    assert messages[-2]["text"] == turn["reply"]


def submitted(client, user: str) -> tuple[dict, Controller]:
    """A transfer of ``user`` confirmed (its submission held by the slow portal)."""
    token = client.post("/api/token", json={"user_id": user}).get_json()["access_token"]
    headers = {"Authorization": f"Bearer {token}"}
    for text in (*("我要转社保", "从杭州转到苏州", ID, "张伟"), "确认"):
        chat(client, headers, text)
    return headers, client.application.config["SI_CONTROLLER"]


def test_a_stream_opened_again_is_told_the_outcome_another_stream_took(slow_client, portal):
    """A page reloaded while its old stream still waits on the server: the old stream
    takes the outcome (to a page that is gone); the new one is told it all the same."""
    client = slow_client
    headers, controller = submitted(client, "twice")
    old, new = (controller.watch("twice", timeout=20, interval=0.01) for _ in range(2))
    assert next(old).state == next(new).state == "executing"

    portal.release.set()
    first = next(old)
    while first.state == "executing":  # progress, then the outcome
        first = next(old)
    again = next(new)
    while again.state == "executing":
        again = next(new)
    assert NUMBER in (first.notice or "")
    assert again.state == "done" and NUMBER in (again.notice or "")
    # Told twice, kept once: the conversation has the outcome one time.
    texts = [m["text"] for m in history(client, headers)["messages"]]
    assert sum(NUMBER in t for t in texts) == 1


def test_a_page_that_saw_the_job_is_told_the_outcome_its_old_stream_took(slow_client, portal):
    """A page loaded again after the job ended shows the outcome (its view's notice) and
    opens a stream; the old page's stream delivers the outcome first. The new stream,
    given the job the page saw, still says it; without it (or for another job) it
    has nothing to tell, and the history has the outcome once."""
    client = slow_client
    headers, controller = submitted(client, "late")
    old = controller.watch("late", timeout=20, interval=0.01)
    assert next(old).state == "executing"
    portal.release.set()
    wait_for(lambda: controller.jobs.load(controller.store.load("late").job_id).finished)
    view = client.get("/api/session", headers=headers).get_json()  # the page loaded again
    assert NUMBER in view["notice"] and view["job"]["id"]
    *_, first = old  # the old stream takes the outcome first
    assert NUMBER in (first.notice or "")

    def outcome(query: str) -> str:
        events = sse(client.get(f"/api/session/events{query}", headers=headers)
                     .get_data(as_text=True))
        assert events[-1][0] == "turn"
        return events[-1][1]["reply"]

    assert NUMBER in outcome(f"?job={view['job']['id']}")
    assert outcome("") == outcome("?job=another-job") == ""
    texts = [m["text"] for m in history(client, headers)["messages"]]
    assert sum(NUMBER in t for t in texts) == 1
