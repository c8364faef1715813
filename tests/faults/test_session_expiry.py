"""The clock: a session whose TTL runs out mid-dialogue.

A citizen collects two fields of ``social_transfer`` and the session expires. Each
store forgets the session its own way (Redis: the key really expires on the server;
SQLite: the row is past its ``updated_at``; memory: the record is past its
deadline). The next message is answered, and its reply starts with "会话已过期…"
exactly once; the dialogue starts over from nothing and ends with one application
in the demo backend. A citizen who never had a session, or who reset it, is not
told anything has expired.

The three stores run in process (the real app, Flask's test client), where the
session is expired directly (``_expire``: the memory record's deadline and the
SQLite row's ``updated_at`` moved into the past, the Redis key given a 1 ms TTL),
so the test does not wait. Redis once more behind gunicorn, over HTTP, with a real
TTL (``TTL``) and a real wait: long enough that the dialogue after the expiry,
five turns over HTTP, never takes a gap of ``TTL`` on a loaded machine.
"""

from __future__ import annotations

import dataclasses
import io
import time

import pytest
from PIL import Image

from si_agent import replies
from si_agent.config.settings import Settings
from si_agent.server import create_app

from .conftest import ROOT, demo_counts

TTL = 10  # seconds (SI_SESSION_TTL)
ZHANG_WEI = "330122196303150178"
COLLECT_TWO = [("我要转社保", "collecting"), ("从杭州转到苏州", "collecting")]
COMPLETE = [("我要转社保", "collecting"), ("从杭州转到苏州", "collecting"),
            (ZHANG_WEI, "collecting"), ("张伟", "confirming"), ("确认", "done")]


def _collected(turn: dict) -> list[str]:
    return [f["key"] for f in turn["fields"] if f["status"] == "collected"]


class InProcess:
    """The real app through Flask's test client, with the calls a citizen's client makes."""

    def __init__(self, settings: Settings) -> None:
        app = create_app(settings)
        self.client = app.test_client()
        self.store = app.config["SI_CONTROLLER"].store
        self.data_dir = settings.data_dir

    def expire(self) -> None:
        """End every session now, the way each store ends it at its TTL."""
        store = self.store
        if store.name == "memory":
            with store._lock:
                past = time.monotonic() - 1
                store._records = {k: dataclasses.replace(r, expires_at=past)
                                  for k, r in store._records.items()}
        elif store.name == "sqlite":
            store._connection().execute("UPDATE sessions SET updated_at = updated_at - ?",
                                        (store.ttl + 1,))
        else:  # Redis expires the keys itself
            keys = list(store.client.scan_iter(match=store.prefix + "*"))
            for key in keys:
                store.client.pexpire(key, 1)
            deadline = time.monotonic() + 5
            while keys and store.client.exists(*keys) and time.monotonic() < deadline:
                time.sleep(0.01)

    def token(self, user: str) -> dict[str, str]:
        res = self.client.post("/api/token", json={"user_id": user})
        return {"Authorization": f"Bearer {res.get_json()['access_token']}"}

    def chat(self, headers: dict[str, str], message: str) -> dict:
        res = self.client.post("/api/chat", json={"message": message}, headers=headers)
        assert res.status_code == 200, res.get_data(as_text=True)
        return res.get_json()

    def session(self, headers: dict[str, str]) -> dict:
        res = self.client.get("/api/session", headers=headers)
        assert res.status_code == 200, res.get_data(as_text=True)
        return res.get_json()

    def reset(self, headers: dict[str, str]) -> None:
        assert self.client.delete("/api/session", headers=headers).status_code == 200


class OverHttp(InProcess):
    """The same calls against a server process."""

    def __init__(self, server) -> None:
        self.server = server
        self.data_dir = server.data_dir

    def expire(self) -> None:
        time.sleep(TTL + 1.5)  # the clock runs past the TTL

    def token(self, user: str) -> dict[str, str]:
        return self.server.token(user)

    def chat(self, headers: dict[str, str], message: str) -> dict:
        res = self.server.chat(headers, message)
        assert res.status_code == 200, res.text
        return res.json()

    def session(self, headers: dict[str, str]) -> dict:
        res = self.server.session(headers)
        assert res.status_code == 200, res.text
        return res.json()


@pytest.fixture(params=["memory", "sqlite", "redis"])
def in_process(request, tmp_path) -> InProcess:
    settings = Settings(business_dir=ROOT / "businesses", knowledge="none", data_dir=tmp_path,
                        engine="rules", session_store=request.param, session_ttl=TTL,
                        rate_limit="1000 per minute")
    if request.param == "redis":
        redis_server = request.getfixturevalue("redis_server")
        settings = settings.replace(redis_url=redis_server.url, redis_prefix="expiry:session:")
    return InProcess(settings)


def _expire_mid_dialogue(api: InProcess) -> None:
    headers = api.token("expiring")
    for message, state in COLLECT_TWO:
        turn = api.chat(headers, message)
        assert turn["state"] == state
    assert _collected(turn) == ["from_city", "to_city"]

    api.expire()

    assert api.session(headers)["state"] == "idle"  # reading tells nothing and uses nothing up
    turn = api.chat(headers, "张伟")
    assert turn["reply"].startswith(replies.SESSION_EXPIRED), turn["reply"]
    assert (turn["state"], turn["turn"], turn["business"]) == ("idle", 1, None)
    for message, state in COMPLETE:  # a fresh start: every field asked again
        turn = api.chat(headers, message)
        assert "会话已过期" not in turn["reply"]
        assert turn["state"] == state
    assert _collected(turn) == ["from_city", "to_city", "id_number", "name"]
    assert turn["result"]["application_no"] in turn["reply"]
    assert demo_counts(api.data_dir, "social_transfer") == {"applications": 1, "calls": 1}


def test_a_session_expired_mid_dialogue_is_told_once_and_starts_over(in_process):
    _expire_mid_dialogue(in_process)


def test_an_upload_after_the_expiry_leaves_the_notice_for_the_next_message(in_process):
    headers = in_process.token("uploading")
    for message, state in COLLECT_TWO:
        assert in_process.chat(headers, message)["state"] == state
    in_process.expire()

    photo = io.BytesIO()
    Image.new("RGB", (120, 80), (200, 30, 30)).save(photo, "JPEG")
    photo.seek(0)
    res = in_process.client.post("/api/upload", headers=headers,
                                 content_type="multipart/form-data",
                                 data={"file": (photo, "photo.jpg")})
    assert res.status_code == 400 and res.get_json()["error"]["code"] == "no_step_awaited"
    assert in_process.chat(headers, "你好")["reply"].startswith(replies.SESSION_EXPIRED)


def test_no_expiry_notice_without_an_expired_session(in_process):
    new = in_process.token("newcomer")
    assert not in_process.chat(new, "你好")["reply"].startswith(replies.SESSION_EXPIRED)

    reset = in_process.token("resetting")
    in_process.chat(reset, "我要转社保")
    in_process.reset(reset)  # a reset is not an expiry
    reset = in_process.token("resetting")  # a reset also revokes the token it was sent with
    in_process.expire()
    turn = in_process.chat(reset, "我要转社保")
    assert "会话已过期" not in turn["reply"] and turn["state"] == "collecting"


def test_redis_key_expiry_behind_gunicorn(redis_server, api_server):
    server = api_server(SESSION_STORE="redis", REDIS_URL=redis_server.url,
                        REDIS_PREFIX="expiry:session:", SESSION_TTL=str(TTL))
    _expire_mid_dialogue(OverHttp(server))
    with redis_server.client() as client:  # the fresh session expires by Redis's clock too
        assert 0 < client.pttl(f"expiry:session:{server.users[0]}") <= TTL * 1000
