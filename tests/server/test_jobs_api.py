"""A long-running executor over HTTP: the turn answers at once with progress; the
result arrives on ``GET /api/session``, on the SSE stream and on the next turn."""

from __future__ import annotations

import json
import threading
import time

import pytest

from si_agent.config.loader import load_businesses
from si_agent.config.model import Api
from si_agent.engine.rules import RuleEngine
from si_agent.executor import Executors
from si_agent.flow.controller import Controller
from si_agent.server import create_app
from si_agent.session import MemoryStore
from si_agent.testing.portal import SlowPortal

from .conftest import ROOT

ID = "330122196303150178"
NUMBER = "SI20261201999999"


@pytest.fixture
def portal():
    portal = SlowPortal("slow_portal", NUMBER, "正在填写表单…", timeout=20)
    yield portal
    portal.release.set()


@pytest.fixture
def client(settings, portal):
    catalog = load_businesses(ROOT / "businesses")
    transfer = catalog["social_transfer"]
    catalog["social_transfer"] = transfer.model_copy(update={"api": Api(
        kind="slow_portal", result_template="已在网上办事大厅提交，受理编号：{application_no}。")})
    executors = Executors(settings, executors={"slow_portal": portal})
    controller = Controller(catalog, MemoryStore(), RuleEngine(catalog), executors)
    yield create_app(settings, controller=controller).test_client()
    executors.close()


def wait_for(predicate, seconds: float = 10.0):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError("timed out")


def sse(body: str) -> list[tuple[str, dict]]:
    events = []
    for block in body.strip().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in block.splitlines())
        events.append((lines["event"], json.loads(lines["data"])))
    return events


def test_a_slow_job_answers_at_once_and_delivers_its_result_later(client, login, portal):
    headers = login("slow")
    for text in ("我要转社保", "从杭州转到苏州", ID, "张伟"):
        turn = client.post("/api/chat", json={"message": text}, headers=headers).get_json()
    assert turn["state"] == "confirming"

    started = time.monotonic()
    turn = client.post("/api/chat", json={"message": "确认"}, headers=headers).get_json()
    assert time.monotonic() - started < 5  # the executor is still blocked
    assert turn["state"] == "executing"
    assert "【社保关系转移】申请已提交，正在办理" in turn["reply"]
    assert turn["job"]["status"] == "running"

    session = wait_for(lambda: (lambda s: s["job"]["progress"] and s)(
        client.get("/api/session", headers=headers).get_json()))
    assert session["state"] == "executing" and session["job"]["progress"] == "正在填写表单…"

    # Another message while it runs: the assistant says where it stands, nothing is resubmitted.
    turn = client.post("/api/chat", json={"message": "办好了吗"}, headers=headers).get_json()
    assert turn["state"] == "executing" and "正在办理中" in turn["reply"]
    assert "正在填写表单" in turn["reply"]
    turn = client.post("/api/chat", json={"message": "取消"}, headers=headers).get_json()
    assert turn["state"] == "executing" and "无法取消" in turn["reply"]

    threading.Timer(0.5, portal.release.set).start()
    stream = client.get("/api/session/events",
                        headers={**headers, "Accept": "text/event-stream"})
    events = sse(stream.get_data(as_text=True))
    assert events[0][0] == "job" and events[0][1]["job"]["progress"] == "正在填写表单…"
    name, final = events[-1]
    assert name == "turn" and final["state"] == "done"
    assert f"受理编号：{NUMBER}" in final["reply"]
    assert final["result"]["application_no"] == NUMBER
    assert len(portal.keys) == 1

    session = client.get("/api/session", headers=headers).get_json()
    assert session["state"] == "done" and session["job"]["status"] == "succeeded"
    assert session["notice"] is None  # delivered by the stream


def test_job_streams_are_bounded_as_the_hand_off_streams_are(client, login, portal):
    """One live job stream per session (a newer ends the older, told to come back later);
    beyond the process's limit a stream is a poll: the job's state now, then ``again``."""
    auth = login("bounded")
    for text in ("我要转社保", "从杭州转到苏州", ID, "张伟", "确认"):
        turn = client.post("/api/chat", json={"message": text}, headers=auth).get_json()
    assert turn["state"] == "executing"
    headers = {**auth, "Accept": "text/event-stream"}
    streams = client.application.config["SI_STREAMS"]
    bodies: dict[str, str] = {}

    def follow(name: str) -> threading.Thread:  # a page's stream, read in its own thread
        def read() -> None:
            bodies[name] = client.get("/api/session/events", headers=headers).get_data(
                as_text=True)
        thread = threading.Thread(target=read, daemon=True)
        thread.start()
        return thread

    older = follow("older")
    wait_for(lambda: streams.held == 1)
    newer = follow("newer")
    older.join(5)
    assert not older.is_alive() and sse(bodies["older"])[-1] == ("again", {"seconds": 15})
    assert streams.held == 1  # the newer one's
    streams.limit = 1  # taken: another citizen's stream is served as a poll
    other = {**login("other"), "Accept": "text/event-stream"}
    poll = client.get("/api/session/events", headers=other)
    assert poll.headers["Retry-After"] == "5" and sse(poll.get_data(as_text=True))[-1][0] == "again"
    portal.release.set()
    newer.join(10)
    events = sse(bodies["newer"])
    assert events[-1][0] == "turn" and events[-1][1]["state"] == "done"
    assert streams.held == 0


def test_without_the_stream_the_next_turn_and_the_session_carry_the_result(
        client, login, portal):
    headers = login("slow2")
    for text in ("我要转社保", "从杭州转到苏州", ID, "张伟", "确认"):
        turn = client.post("/api/chat", json={"message": text}, headers=headers).get_json()
    assert turn["state"] == "executing"
    portal.release.set()
    session = wait_for(lambda: (lambda s: s["state"] == "done" and s)(
        client.get("/api/session", headers=headers).get_json()))
    assert f"受理编号：{NUMBER}" in session["notice"]
    turn = client.post("/api/chat", json={"message": "谢谢"}, headers=headers).get_json()
    assert turn["reply"].startswith("已在网上办事大厅提交，受理编号：")
    assert client.get("/api/session", headers=headers).get_json()["notice"] is None
    assert len(portal.keys) == 1


class RefusingRunner:
    """A job runner whose queue is down: it takes no job."""

    def submit(self, job_id, work):
        raise ConnectionError("the job queue does not answer")


def test_a_job_the_runner_refused_never_says_it_was_submitted(settings, portal):
    catalog = load_businesses(ROOT / "businesses")
    catalog["social_transfer"] = catalog["social_transfer"].model_copy(update={"api": Api(
        kind="slow_portal", result_template="已在网上办事大厅提交，受理编号：{application_no}。")})
    executors = Executors(settings, executors={"slow_portal": portal})
    controller = Controller(catalog, MemoryStore(), RuleEngine(catalog), executors,
                            runner=RefusingRunner())
    client = create_app(settings, controller=controller).test_client()
    token = client.post("/api/token", json={"user_id": "refused-runner"}).get_json()
    headers = {"Authorization": f"Bearer {token['access_token']}"}
    for text in ("我要转社保", "从杭州转到苏州", ID, "张伟"):
        client.post("/api/chat", json={"message": text}, headers=headers)
    turn = client.post("/api/chat", json={"message": "确认"}, headers=headers).get_json()
    assert turn["state"] == "failed"
    assert "已提交" not in turn["reply"]
    assert "提交未成功：办理服务暂时无法接收申请，申请没有提交。" in turn["reply"]
    assert portal.keys == []  # never run
    history = client.get("/api/session/history", headers=headers).get_json()["messages"]
    assert not any("已提交" in m["text"] for m in history)
    executors.close()
