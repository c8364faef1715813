"""Real dialogues through the API end in audit entries: executing, the submission
with its application number, done or failed; users hashed, values masked."""

from __future__ import annotations

import sqlite3
import time

import pytest
from flask_jwt_extended import create_access_token

from si_agent.config.loader import load_businesses
from si_agent.config.model import Api
from si_agent.config.settings import Settings
from si_agent.demo_backend import ensure_db, fail_next
from si_agent.engine.rules import RuleEngine
from si_agent.executor import Executors
from si_agent.flow.controller import Controller
from si_agent.server import create_app
from si_agent.session import MemoryStore
from si_agent.testing.portal import SlowPortal

from .conftest import ROOT

ID = "330122196303150178"
NAME = "张伟"
TRANSFER = ("我要转社保", "从杭州转到苏州", ID, NAME)


@pytest.fixture
def settings(tmp_path) -> Settings:
    return Settings(business_dir=ROOT / "businesses", knowledge="none", data_dir=tmp_path,
                    session_store="memory", audit_store="sqlite",
                    rate_limit="1000 per minute")


@pytest.fixture
def app(settings):
    return create_app(settings)


@pytest.fixture
def client(app):
    return app.test_client()


def login(client, user: str) -> dict[str, str]:
    token = client.post("/api/token", json={"user_id": user}).get_json()["access_token"]
    return {"Authorization": f"Bearer {token}"}


def admin(app) -> dict[str, str]:
    with app.app_context():
        token = create_access_token(identity="ops", additional_claims={"roles": ["admin"]})
    return {"Authorization": f"Bearer {token}"}


def say(client, headers, *texts: str) -> dict:
    for text in texts:
        turn = client.post("/api/chat", json={"message": text}, headers=headers).get_json()
    return turn


def applications(settings: Settings) -> set[str]:
    """The demo backend's application numbers, its seeded ones included."""
    ensure_db(settings.demo_backend_db)
    with sqlite3.connect(settings.demo_backend_db) as conn:
        return {row[0] for row in conn.execute("SELECT application_no FROM applications")}


def raw_audit_bytes(settings: Settings) -> bytes:
    """Every byte the audit store wrote, the WAL included."""
    return b"".join(p.read_bytes() for p in settings.data_dir.glob("audit.db*"))


def test_a_submission_ends_in_executing_submission_and_done(app, client, settings):
    headers = login(client, "alice")
    seeded = applications(settings)
    say(client, headers, *TRANSFER)
    turn = say(client, headers, "确认")
    assert turn["state"] == "done"
    number = turn["result"]["application_no"]

    entries = client.get("/api/admin/audit", headers=admin(app)).get_json()["entries"]
    assert [(e["event"], e["state"] or e["channel"], e["outcome"]) for e in entries] == [
        ("state", "done", "succeeded"), ("submission", "http", "succeeded"),
        ("state", "executing", "running")]
    user = app.config["SI_CONTROLLER"].audit.user_ref("alice")
    assert {e["user"] for e in entries} == {user} and {e["business"] for e in entries} == {
        "social_transfer"}
    assert len({e["job_id"] for e in entries}) == 1 and entries[0]["job_id"]
    assert [e["application_no"] for e in entries] == [number, number, None]
    for e in entries:
        assert e["values"] == {"from_city": "杭州市", "to_city": "苏州市",
                               "id_number": "3301**********0178", "name": "张*"}
    assert applications(settings) - seeded == {number}  # submitted once
    stored = raw_audit_bytes(settings)
    assert ID.encode() not in stored and NAME.encode() not in stored
    assert b"alice" not in stored


def test_a_failing_backend_gives_a_failed_entry_and_the_retry_is_audited(app, client, settings):
    headers = login(client, "bob")
    seeded = applications(settings)
    say(client, headers, *TRANSFER)
    fail_next(settings.demo_backend_db, 1, status=503)
    turn = say(client, headers, "确认")
    assert turn["state"] == "failed"
    audit = app.config["SI_CONTROLLER"].audit
    failed = audit.query()
    assert [(e.event, e.state or e.channel, e.outcome) for e in failed] == [
        ("state", "failed", "failed"), ("submission", "http", "failed"),
        ("state", "executing", "running")]
    assert failed[0].detail and failed[0].detail == failed[1].detail
    assert failed[0].application_no is None and failed[0].values["id_number"] == \
        "3301**********0178"
    assert applications(settings) == seeded

    turn = say(client, headers, "重试")
    assert turn["state"] == "done"
    retried = audit.query(limit=3)
    assert [(e.event, e.state or e.channel, e.outcome) for e in retried] == [
        ("state", "done", "succeeded"), ("submission", "http", "succeeded"),
        ("state", "executing", "running")]
    assert retried[0].job_id != failed[0].job_id  # a retry is a job of its own
    assert applications(settings) - seeded == {retried[0].application_no}


def test_a_long_running_executor_is_audited_from_its_background_run(settings):
    number = "SI20261201999999"
    portal = SlowPortal("slow_portal", number, "正在填写表单…", timeout=20)
    catalog = load_businesses(ROOT / "businesses")
    catalog["social_transfer"] = catalog["social_transfer"].model_copy(update={"api": Api(
        kind="slow_portal", result_template="已提交，受理编号：{application_no}。")})
    executors = Executors(settings, executors={"slow_portal": portal})
    controller = Controller(catalog, MemoryStore(), RuleEngine(catalog), executors)
    try:
        for text in (*TRANSFER, "确认"):
            turn = controller.handle("carol", text)
        assert turn.state == "executing"
        portal.release.set()
        deadline = time.monotonic() + 20  # a bound on the wait, not a speed check
        while len(controller.audit.query()) < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        portal.release.set()
        executors.close()
    entries = controller.audit.query()
    assert [(e.event, e.state or e.channel, e.outcome, e.application_no) for e in entries] == [
        ("state", "done", "succeeded", number), ("submission", "slow_portal", "succeeded", number),
        ("state", "executing", "running", None)]


def test_the_admin_endpoint_needs_a_token_with_the_admin_role(app, client):
    assert client.get("/api/admin/audit").status_code == 401
    response = client.get("/api/admin/audit", headers=login(client, "alice"))
    assert response.status_code == 403
    assert response.get_json()["error"] == {"code": "admin_required", "message": "需要管理员权限。"}
    with app.app_context():
        other = create_access_token(identity="ops", additional_claims={"roles": ["auditor"]})
    assert client.get("/api/admin/audit",
                      headers={"Authorization": f"Bearer {other}"}).status_code == 403
    response = client.get("/api/admin/audit", headers=admin(app))
    assert response.status_code == 200 and response.get_json() == {"entries": [], "count": 0}


def test_the_admin_endpoint_filters(app, client):
    say(client, login(client, "dave"), *TRANSFER, "确认")
    say(client, login(client, "erin"), "我的社保卡丢了", ID, NAME, "13800138001", "临时", "确认")
    headers = admin(app)

    def get(query: str) -> dict:
        response = client.get(f"/api/admin/audit?{query}", headers=headers)
        assert response.status_code == 200, response.get_json()
        return response.get_json()

    assert {e["business"] for e in get("")["entries"]} == {"social_transfer", "card_loss"}
    transfer = get("business=social_transfer")
    assert transfer["count"] == 3 and {e["business"] for e in transfer["entries"]} == {
        "social_transfer"}
    assert get("limit=1")["count"] == 1
    assert get("since=1h")["count"] == get("")["count"]
    assert get("since=2999-01-01T00:00")["count"] == 0
    for bad in ("since=yesterday", "limit=0", "limit=x", "limit=1001", "business=a%20b"):
        response = client.get(f"/api/admin/audit?{bad}", headers=headers)
        assert response.status_code == 400
        assert response.get_json()["error"]["code"] == "invalid_audit_query"
