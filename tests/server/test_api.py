"""The HTTP contract: turn objects, streaming, masking, isolation and every error."""

from __future__ import annotations

import json
import re
import time

import jwt as pyjwt
import pytest

from si_agent.config.settings import DEV_JWT_SECRET
from si_agent.server import create_app
from si_agent.server.auth import InsecureSettings

ID = "330122196303150178"
TURN_KEYS = {"reply", "state", "business", "fields", "awaiting", "suggestion", "result", "turn",
             "usage", "job", "notice", "suspended", "step", "steps", "photo", "theme", "services",
             "choices", "message", "handoff"}


def chat(client, headers, message, **kw):
    return client.post("/api/chat", json={"message": message}, headers=headers, **kw)


def test_token_and_a_whole_business(client, login):
    res = client.post("/api/token", json={"user_id": "alice"})
    body = res.get_json()
    assert res.status_code == 200
    assert body["token_type"] == "Bearer" and body["expires_in"] == 3600
    headers = {"Authorization": f"Bearer {body['access_token']}"}
    turns = [chat(client, headers, m).get_json() for m in
             ("我要转社保", "从杭州转到苏州", ID, "张伟", "确认")]
    assert set(turns[0]) == TURN_KEYS
    assert turns[0]["business"] == {"id": "social_transfer", "name": "社保关系转移"}
    assert [t["state"] for t in turns] == ["collecting"] * 3 + ["confirming", "done"]
    assert [t["turn"] for t in turns] == [1, 2, 3, 4, 5]
    fields = {f["key"]: f for f in turns[2]["fields"]}
    assert fields["id_number"] == {"key": "id_number", "label": "身份证号",
                                   "value": "3301**********0178", "status": "collected",
                                   "error": None, "group": None}
    assert fields["name"]["status"] == "pending" and fields["name"]["value"] is None
    assert re.fullmatch(r"SI\d{14}", turns[-1]["result"]["application_no"])
    assert turns[-1]["result"]["application_no"] in turns[-1]["reply"]


def test_id_numbers_are_masked_everywhere(client, login, caplog):
    headers = login()
    caplog.set_level("DEBUG")
    chat(client, headers, "我要转社保")
    res = chat(client, headers, f"从杭州到苏州，身份证{ID}")
    assert ID not in res.get_data(as_text=True)
    assert ID not in client.get("/api/session", headers=headers).get_data(as_text=True)
    assert ID not in caplog.text


def test_invalid_value_status(client, login):
    headers = login()
    chat(client, headers, "查养老金")
    body = chat(client, headers, "330122196303150179").get_json()
    field = body["fields"][0]
    assert field["status"] == "invalid" and body["awaiting"] == "id_number"
    assert "校验" in body["reply"] or "不正确" in body["reply"]


def test_streaming_events(client, login):
    headers = {**login(), "Accept": "text/event-stream"}
    res = chat(client, headers, "我要转社保")
    assert res.status_code == 200 and res.mimetype == "text/event-stream"
    events = [
        (block.split("\n")[0].removeprefix("event: "),
         json.loads(block.split("\n")[1].removeprefix("data: ")))
        for block in res.get_data(as_text=True).strip().split("\n\n")
    ]
    deltas = [data["text"] for name, data in events if name == "delta"]
    assert len(deltas) > 3 and all(len(d) <= 6 for d in deltas)
    name, turn = events[-1]
    assert name == "turn" and set(turn) == TURN_KEYS
    assert "".join(deltas) == turn["reply"]
    assert [n for n, _ in events[:-1]] == ["delta"] * (len(events) - 1)


def test_session_get_and_delete(client, login):
    headers = login()
    chat(client, headers, "我要转社保")
    got = client.get("/api/session", headers=headers).get_json()
    assert set(got) == TURN_KEYS - {"reply", "message"} and got["state"] == "collecting"
    gone = client.delete("/api/session", headers=headers).get_json()
    assert gone["state"] == "idle" and gone["business"] is None and gone["fields"] == []
    # The token used to reset is revoked (issue 23.5); a new one sees the idle session.
    assert client.get("/api/session", headers=headers).get_json()["error"]["code"] == \
        "token_revoked"
    assert client.get("/api/session", headers=login()).get_json()["state"] == "idle"


def test_users_are_isolated(client, login):
    alice, bob = login("alice"), login("bob")
    chat(client, alice, "我要转社保")
    chat(client, alice, "从杭州转到苏州")
    assert client.get("/api/session", headers=bob).get_json()["state"] == "idle"
    client.delete("/api/session", headers=bob)
    again = client.get("/api/session", headers=alice).get_json()
    assert again["state"] == "collecting"
    assert {f["key"]: f["value"] for f in again["fields"]}["from_city"] == "杭州市"


def test_businesses_health_openapi(client):
    businesses = client.get("/api/businesses").get_json()
    assert len(businesses) == 13
    by_id = {b["id"]: b for b in businesses}
    assert by_id["pension_query"]["name"] == "养老金查询"
    assert by_id["pension_query"]["type"] == "query"
    assert all(set(b) == {"id", "name", "type", "description", "online"} for b in businesses)
    assert all(b["online"] is True for b in businesses)  # nothing is missing here
    assert client.get("/healthz").get_json() == {"status": "ok"}
    ready = client.get("/readyz")
    assert ready.status_code == 200
    assert ready.get_json()["checks"]["session_store"] == {"ok": True, "backend": "memory"}
    doc = client.get("/openapi.json").get_json()
    assert doc["openapi"] == "3.1.0"
    assert {"/api/token", "/api/chat", "/api/session", "/api/businesses", "/healthz",
            "/readyz"} <= set(doc["paths"])


def _state(client, headers):
    return client.get("/api/session", headers=headers).get_json()


@pytest.mark.parametrize("kwargs,status,code", [
    ({"json": {}}, 400, "empty_message"),
    ({"json": {"message": "   "}}, 400, "empty_message"),
    ({"json": {"message": None}}, 400, "empty_message"),
    ({"json": {"message": "\x00\x00"}}, 400, "empty_message"),
    ({"json": {"message": "\u202e" * 100}}, 400, "empty_message"),
    ({"json": {"message": 42}}, 400, "message_not_text"),
    ({"json": {"message": 123}}, 400, "message_not_text"),
    ({"json": {"message": ["我要转社保"]}}, 400, "message_not_text"),
    ({"json": {"message": {"text": "你好"}}}, 400, "message_not_text"),
    ({"json": {"message": True}}, 400, "message_not_text"),
    ({"json": ["我要转社保"]}, 400, "malformed_json"),
    ({"data": "{not json", "content_type": "application/json"}, 400, "malformed_json"),
    ({"data": "message=hi", "content_type": "application/x-www-form-urlencoded"}, 415,
     "unsupported_media_type"),
    ({"json": {"message": "杭" * 2001}}, 413, "message_too_long"),
    ({"data": json.dumps({"message": "x", "pad": "y" * 70000}),
      "content_type": "application/json"}, 413, "payload_too_large"),
])
def test_bad_requests_leave_the_session_unchanged(client, login, kwargs, status, code):
    headers = login()
    chat(client, headers, "我要转社保")
    before = _state(client, headers)
    res = client.post("/api/chat", headers=headers, **kwargs)
    assert res.status_code == status
    assert res.get_json()["error"]["code"] == code
    assert res.get_json()["error"]["message"]
    assert _state(client, headers) == before


def test_token_errors(client, app, settings):
    assert client.post("/api/chat", json={"message": "hi"}).status_code == 401
    bad = {"Authorization": "Bearer not.a.token"}
    res = client.post("/api/chat", json={"message": "hi"}, headers=bad)
    assert res.status_code == 401 and res.get_json()["error"]["code"] == "invalid_token"
    forged = pyjwt.encode({"sub": "alice", "type": "access", "fresh": False, "jti": "x",
                           "iat": int(time.time()), "nbf": int(time.time()),
                           "exp": int(time.time()) + 60}, "another-secret-another-secret-123",
                          algorithm="HS256")
    res = client.post("/api/chat", json={"message": "hi"},
                      headers={"Authorization": f"Bearer {forged}"})
    assert res.status_code == 401 and res.get_json()["error"]["code"] == "invalid_token"
    expired = pyjwt.encode({"sub": "alice", "type": "access", "fresh": False, "jti": "x",
                            "iat": 1, "nbf": 1, "exp": 2}, settings.jwt_secret, algorithm="HS256")
    res = client.get("/api/session", headers={"Authorization": f"Bearer {expired}"})
    assert res.status_code == 401 and res.get_json()["error"]["code"] == "token_expired"
    res = client.post("/api/token", json={"user_id": "x" * 65})
    assert res.status_code == 400 and res.get_json()["error"]["code"] == "invalid_user_id"


def test_not_found_and_method_not_allowed(client):
    res = client.get("/api/nothing")
    assert res.status_code == 404 and res.get_json()["error"]["code"] == "not_found"
    res = client.put("/api/chat", json={"message": "x"})
    assert res.status_code == 405 and res.get_json()["error"]["code"] == "method_not_allowed"


def test_rate_limit_per_user(settings, tmp_path):
    app = create_app(settings.replace(rate_limit="3 per minute"))
    client = app.test_client()

    def headers(user):
        token = client.post("/api/token", json={"user_id": user}).get_json()["access_token"]
        return {"Authorization": f"Bearer {token}"}

    alice, bob = headers("alice"), headers("bob")
    codes = [chat(client, alice, "你好").status_code for _ in range(4)]
    assert codes == [200, 200, 200, 429]
    res = chat(client, alice, "你好")
    assert res.get_json()["error"]["code"] == "rate_limited"
    assert chat(client, bob, "你好").status_code == 200


def test_prod_mode_refuses_default_secret_and_gates_tokens(settings):
    with pytest.raises(InsecureSettings, match="SI_JWT_SECRET"):
        create_app(settings.replace(auth_mode="prod", jwt_secret=DEV_JWT_SECRET))
    secret = "s" * 40
    app = create_app(settings.replace(auth_mode="prod", jwt_secret=secret))
    client = app.test_client()
    assert client.post("/api/token", json={"user_id": "alice"}).status_code == 404
    # A token from the deployment's identity provider (same HS256 secret) is accepted.
    now = int(time.time())
    idp = pyjwt.encode({"sub": "alice", "type": "access", "fresh": False, "jti": "j",
                        "iat": now, "nbf": now, "exp": now + 60}, secret, algorithm="HS256")
    res = client.get("/api/session", headers={"Authorization": f"Bearer {idp}"})
    assert res.status_code == 200

    gated = create_app(settings.replace(auth_mode="prod", jwt_secret=secret,
                                        gateway_clients=(("portal", "p" * 20),))).test_client()
    assert gated.post("/api/token", json={"user_id": "alice"}).status_code == 401
    res = gated.post("/api/token", json={"user_id": "alice"},
                     auth=("portal", "p" * 20))
    assert res.status_code == 200 and res.get_json()["access_token"]
    assert gated.post("/api/token", json={"user_id": "a"}, auth=("portal", "wrong")).status_code == 401


def test_rs256_identity_provider_tokens(settings):
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    public = key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo).decode()
    app = create_app(settings.replace(auth_mode="prod", jwt_algorithm="RS256",
                                      jwt_public_key=public, audit_pepper="a" * 40,
                                      upload_key="u" * 40))
    client = app.test_client()
    now = int(time.time())
    claims = {"sub": "carol", "type": "access", "fresh": False, "jti": "j",
              "iat": now, "nbf": now, "exp": now + 60}
    token = pyjwt.encode(claims, key, algorithm="RS256")
    assert client.get("/api/session", headers={"Authorization": f"Bearer {token}"}).status_code == 200
    hs = pyjwt.encode(claims, "x" * 40, algorithm="HS256")
    assert client.get("/api/session", headers={"Authorization": f"Bearer {hs}"}).status_code == 401


@pytest.mark.redis
def test_sessions_live_in_redis_with_ttl(settings):
    import os
    import uuid

    import redis

    url = os.environ.get("SI_TEST_REDIS_URL", "redis://127.0.0.1:6379/15")
    prefix = f"si-api-test-{uuid.uuid4().hex}:"
    app = create_app(settings.replace(session_store="redis", redis_url=url,
                                      redis_prefix=prefix, session_ttl=600))
    client = app.test_client()
    token = client.post("/api/token", json={"user_id": "dave"}).get_json()["access_token"]
    headers = {"Authorization": f"Bearer {token}"}
    chat(client, headers, "我要转社保")
    chat(client, headers, "从杭州转到苏州")
    raw = redis.Redis.from_url(url)
    try:
        assert 0 < raw.ttl(prefix + "dave") <= 600
        # A second app (another worker) sees the same session.
        other = create_app(settings.replace(session_store="redis", redis_url=url,
                                            redis_prefix=prefix)).test_client()
        got = other.get("/api/session", headers=headers).get_json()
        assert got["state"] == "collecting" and got["awaiting"] == "id_number"
        assert other.get("/readyz").get_json()["checks"]["session_store"]["backend"] == "redis"
    finally:
        for key in raw.scan_iter(prefix + "*"):
            raw.delete(key)


def test_demo_backend_is_not_served_in_prod(settings, client):
    assert client.get("/demo/api/_admin/applications").status_code == 200
    prod = create_app(settings.replace(auth_mode="prod", jwt_secret="z" * 40)).test_client()
    res = prod.get("/demo/api/_admin/applications")
    assert res.status_code == 404 and res.get_json()["error"]["code"] == "not_found"


def test_tokens_without_expiry_are_refused(client, settings):
    forever = pyjwt.encode({"sub": "alice", "type": "access", "fresh": False, "jti": "x",
                            "iat": int(time.time()), "nbf": int(time.time())},
                           settings.jwt_secret, algorithm="HS256")
    res = client.get("/api/session", headers={"Authorization": f"Bearer {forever}"})
    assert res.status_code == 401 and res.get_json()["error"]["code"] == "invalid_token"


def test_a_turn_that_keeps_conflicting_is_a_409_without_the_user_id(settings, caplog):
    from si_agent.app import build_controller
    from si_agent.errors import SessionConflict

    controller = build_controller(settings)

    class AlwaysConflicting:
        name = "memory"  # its backend, for the token denylist next to it

        def __init__(self, inner):
            self.inner = inner

        def load(self, sid):
            return self.inner.load(sid)

        def save(self, session, job=None):
            raise SessionConflict("sid#x", expected=session.version, found=session.version + 1)

        def delete(self, sid):
            self.inner.delete(sid)

        def ping(self):
            return True

    controller.store = AlwaysConflicting(controller.store)
    client = create_app(settings, controller=controller).test_client()
    token = client.post("/api/token", json={"user_id": "13812345678"}).get_json()["access_token"]
    res = client.post("/api/chat", json={"message": "你好"},
                      headers={"Authorization": f"Bearer {token}"})
    assert res.status_code == 409 and res.get_json()["error"]["code"] == "conflict"
    assert "13812345678" not in caplog.text
