"""Redis dies mid-dialogue and comes back: 503 + Retry-After meanwhile, nothing lost after.

A test-owned ``redis-server`` (free port, AOF with ``appendfsync always``) holds the
sessions, the jobs and the rate-limit counters of a real API process (gunicorn,
2 workers). A citizen collects three fields of ``social_transfer``; Redis is killed
with SIGKILL; every API call that needs it answers 503 with a Chinese message and
a ``Retry-After`` header (never a 500, never a traceback), a streamed turn too (it
fails before its first event). Redis restarts on the same port and
directory: the dialogue goes on with every field collected before the crash and
ends with exactly one application in the demo backend.

Also: Redis killed right after a submission (the outcome survives, no second
application), and an API started before its Redis (unready, then a whole dialogue).
"""

from __future__ import annotations

import pytest

from .conftest import demo_counts, stopped_redis_server

requests = pytest.importorskip("requests")

ZHANG_WEI = "330122196303150178"
BEFORE_CRASH = [("我要转社保", "collecting"), ("从杭州转到苏州", "collecting"),
                (ZHANG_WEI, "collecting")]
AFTER_RESTART = [("张伟", "confirming"), ("确认", "done")]
COLLECTED = {"from_city": "杭州市", "to_city": "苏州市", "id_number": "3301**********0178"}


def _collected(turn: dict) -> dict[str, str]:
    return {f["key"]: f["value"] for f in turn["fields"] if f["status"] == "collected"}


def _assert_unavailable(res: requests.Response) -> None:
    assert res.status_code == 503, (res.status_code, res.text)
    assert res.headers["Content-Type"].startswith("application/json")
    assert int(res.headers["Retry-After"]) > 0
    error = res.json()["error"]
    assert error["code"] == "store_unavailable"
    assert error["message"] == "服务暂时不可用，请稍后再试。"
    assert "Traceback" not in res.text


def test_redis_killed_mid_dialogue_then_restarted(redis_server, api_server):
    server = api_server(SESSION_STORE="redis", REDIS_URL=redis_server.url,
                        REDIS_PREFIX="faults:session:", RATE_LIMIT_STORAGE=redis_server.url)
    headers = server.token("crash")
    for message, state in BEFORE_CRASH:
        res = server.chat(headers, message)
        assert res.status_code == 200, res.text
        assert res.json()["state"] == state
    assert _collected(res.json()) == COLLECTED

    redis_server.kill()
    # Every call that needs the store, on both workers (fresh connections spread them).
    close = {**headers, "Connection": "close"}
    for _ in range(4):
        _assert_unavailable(server.chat(close, "张伟"))
        _assert_unavailable(server.session(close))
        _assert_unavailable(requests.delete(f"{server.url}/api/session", headers=close,
                                            timeout=60))
    ready = server.get("/readyz")
    assert ready.status_code == 503
    assert ready.json()["checks"]["session_store"]["ok"] is False
    # Streams fail before their first event: the same 503, not a broken 200 stream.
    _assert_unavailable(server.chat({**close, "Accept": "text/event-stream"}, "张伟"))
    _assert_unavailable(server.get("/api/session/events", headers=close))
    assert server.get("/healthz").status_code == 200  # the process itself is fine
    assert demo_counts(server.data_dir, "social_transfer")["applications"] == 0

    redis_server.start()
    res = server.session(headers)
    assert res.status_code == 200, res.text
    assert res.json()["state"] == "collecting"
    assert _collected(res.json()) == COLLECTED  # nothing collected before the crash is lost
    for message, state in AFTER_RESTART:
        res = server.chat(headers, message)
        assert res.status_code == 200, res.text
        assert res.json()["state"] == state
    done = res.json()
    assert _collected(done) == {**COLLECTED, "name": "张伟"}
    application_no = done["result"]["application_no"]
    assert application_no in done["reply"]
    assert demo_counts(server.data_dir, "social_transfer") == {"applications": 1, "calls": 1}
    assert ZHANG_WEI not in server.log_text()
    assert "Traceback" not in server.log_text()


def test_redis_killed_after_the_submission_keeps_the_outcome(redis_server, api_server):
    """The AOF (``appendfsync always``) has the outcome the instant it was answered."""
    server = api_server(SESSION_STORE="redis", REDIS_URL=redis_server.url,
                        REDIS_PREFIX="faults:session:", RATE_LIMIT_STORAGE=redis_server.url)
    headers = server.token("after")
    for message, state in [*BEFORE_CRASH, *AFTER_RESTART]:
        res = server.chat(headers, message)
        assert res.json()["state"] == state, res.text
    application_no = res.json()["result"]["application_no"]

    redis_server.kill()
    _assert_unavailable(server.chat(headers, "确认"))
    redis_server.start()
    res = server.session(headers)
    assert res.status_code == 200, res.text
    assert res.json()["state"] == "done"
    assert res.json()["result"]["application_no"] == application_no
    res = server.chat(headers, "确认")  # nothing left to confirm: no second submission
    assert res.status_code == 200, res.text
    assert demo_counts(server.data_dir, "social_transfer") == {"applications": 1, "calls": 1}


def test_api_started_before_redis(tmp_path, api_server):
    """A deployment where the API comes up first (compose, k8s): unready, then fine."""
    redis_server = stopped_redis_server(tmp_path)  # its port is chosen, nothing listens yet
    server = api_server(SESSION_STORE="redis", REDIS_URL=redis_server.url,
                        REDIS_PREFIX="faults:session:", RATE_LIMIT_STORAGE=redis_server.url)
    try:
        headers = server.token("early")
        _assert_unavailable(server.chat(headers, "我要转社保"))
        assert server.get("/readyz").status_code == 503
        redis_server.start()
        assert server.get("/readyz").status_code == 200
        for message, state in [*BEFORE_CRASH, *AFTER_RESTART]:
            res = server.chat(headers, message)
            assert res.status_code == 200, res.text
            assert res.json()["state"] == state
        assert demo_counts(server.data_dir, "social_transfer") == {"applications": 1, "calls": 1}
    finally:
        redis_server.close()


def test_a_raw_redis_connection_error_is_a_503_too(tmp_path):
    """Redis errors that no store wrapped (e.g. from the step files next to the sessions)
    get the same answer from the app's error handler."""
    redis = pytest.importorskip("redis")
    from si_agent.config.settings import Settings
    from si_agent.server import create_app

    from .conftest import ROOT

    app = create_app(Settings(business_dir=ROOT / "businesses", knowledge="none",
                              data_dir=tmp_path, session_store="memory"))

    @app.get("/unwrapped")
    def unwrapped():
        raise redis.ConnectionError("Error 111 connecting to 127.0.0.1:1. Connection refused.")

    @app.get("/timeout")
    def timeout():
        raise redis.TimeoutError("Timeout reading from socket")

    for path in ("/unwrapped", "/timeout"):
        res = app.test_client().get(path)
        assert (res.status_code, res.headers["Retry-After"]) == (503, "5")
        assert res.get_json() == {"error": {"code": "store_unavailable",
                                            "message": "服务暂时不可用，请稍后再试。"}}


@pytest.mark.parametrize("error", ["ConnectionError", "TimeoutError"])
def test_a_raw_redis_error_in_a_streamed_turn_is_a_503_too(tmp_path, monkeypatch, error):
    """A streamed turn runs in a worker thread, out of reach of the app's error
    handlers: an unwrapped Redis error there is the same 503, not a 500. /readyz's
    503 carries Retry-After like the others."""
    redis = pytest.importorskip("redis")
    from si_agent.config.settings import Settings
    from si_agent.server import create_app

    from .conftest import ROOT

    app = create_app(Settings(business_dir=ROOT / "businesses", knowledge="none",
                              data_dir=tmp_path, session_store="memory"))
    client = app.test_client()
    token = client.post("/api/token", json={"user_id": "stream"}).get_json()["access_token"]
    controller = app.config["SI_CONTROLLER"]

    def down(*args, **kwargs):
        raise getattr(redis, error)("Error 111 connecting to 127.0.0.1:1. Connection refused.")

    monkeypatch.setattr(controller, "handle", down)
    for accept in ("text/event-stream", "application/json"):
        res = client.post("/api/chat", json={"message": "我要转社保"},
                          headers={"Authorization": f"Bearer {token}", "Accept": accept})
        assert (res.status_code, res.headers["Retry-After"]) == (503, "5"), accept
        assert res.get_json()["error"]["code"] == "store_unavailable"

    monkeypatch.setattr(controller.store, "ping", lambda: False)
    ready = client.get("/readyz")
    assert (ready.status_code, ready.headers["Retry-After"]) == (503, "5")
