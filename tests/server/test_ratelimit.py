"""Rate limits (si_agent.server.ratelimit): per user, shared through Redis, and kept
when Redis goes away (a test-owned redis-server, killed and started again)."""

from __future__ import annotations

import os
import shutil
import time
import uuid

import jwt as pyjwt
import pytest
import redis

from si_agent.server import create_app, ratelimit
from si_agent.testing.processes import RedisServer

REDIS_URL = os.environ.get("SI_TEST_REDIS_URL", "redis://127.0.0.1:6379/15")


def _login(client, user: str) -> dict[str, str]:
    token = client.post("/api/token", json={"user_id": user}).get_json()["access_token"]
    return {"Authorization": f"Bearer {token}"}


def _chat(client, headers):
    return client.post("/api/chat", json={"message": "你好"}, headers=headers)


def test_over_the_limit_is_429_with_retry_after_per_user(settings):
    client = create_app(settings.replace(rate_limit="2 per minute")).test_client()
    alice, bob = _login(client, "alice"), _login(client, "bob")
    assert [_chat(client, alice).status_code for _ in range(3)] == [200, 200, 429]
    res = _chat(client, alice)
    assert res.status_code == 429
    assert res.get_json()["error"] == {"code": "rate_limited",
                                       "message": "您的操作太频繁了，请稍后再试。"}
    assert 1 <= int(res.headers["Retry-After"]) <= 60
    assert _chat(client, bob).status_code == 200
    # The session API is on the same blueprint and counted with the chat.
    assert client.get("/api/session", headers=alice).status_code == 429
    # Without a token the count is per address, and the answer is still the 401.
    assert client.post("/api/chat", json={"message": "你好"}).status_code == 401


def test_junk_tokens_do_not_use_up_the_address_bucket_of_expired_tokens(settings):
    # Behind a proxy every user has the proxy's address: junk tokens from one of
    # them must not turn another user's expired token into a 429 (the page refreshes
    # its token on 401 token_expired, and waits on 429).
    client = create_app(settings.replace(rate_limit="2 per minute")).test_client()
    junk = {"Authorization": "Bearer not.a.token"}
    assert [_chat(client, junk).status_code for _ in range(5)] == [401] * 5
    now = int(time.time())
    expired = pyjwt.encode({"sub": "carol", "type": "access", "fresh": False, "jti": "j",
                            "iat": now - 120, "nbf": now - 120, "exp": now - 60},
                           settings.jwt_secret, algorithm="HS256")
    res = _chat(client, {"Authorization": f"Bearer {expired}"})
    assert res.status_code == 401 and res.get_json()["error"]["code"] == "token_expired"
    # Requests without any token are still counted per address.
    assert [client.post("/api/chat", json={"message": "你好"}).status_code
            for _ in range(3)] == [401, 401, 429]


def _anonymous(client, forwarded_for: str) -> int:
    return client.post("/api/chat", json={"message": "你好"},
                       headers={"X-Forwarded-For": forwarded_for}).status_code


def test_behind_a_trusted_proxy_requests_without_a_token_count_per_client(settings):
    client = create_app(settings.replace(rate_limit="2 per minute", proxy_hops=1)).test_client()
    assert [_anonymous(client, "203.0.113.7") for _ in range(3)] == [401, 401, 429]
    assert _anonymous(client, "198.51.100.9") == 401  # another citizen, own budget


def test_a_forged_forwarded_for_is_ignored_without_a_trusted_proxy(settings):
    client = create_app(settings.replace(rate_limit="2 per minute")).test_client()
    statuses = [_anonymous(client, f"203.0.113.{i}") for i in range(3)]
    assert statuses == [401, 401, 429]  # one address however the header is set


def test_a_malformed_rate_refuses_to_start(settings):
    with pytest.raises(ValueError):
        create_app(settings.replace(rate_limit="many per fortnight"))


@pytest.mark.redis
def test_counts_are_shared_by_apps_through_redis(settings):
    """Two apps stand for two gunicorn workers (or hosts)."""
    shared = settings.replace(rate_limit="2 per minute", rate_limit_storage=REDIS_URL)
    one, two = create_app(shared).test_client(), create_app(shared).test_client()
    user = f"rl-{uuid.uuid4().hex[:8]}"
    try:
        assert _chat(one, _login(one, user)).status_code == 200
        assert _chat(two, _login(two, user)).status_code == 200
        assert _chat(one, _login(one, user)).status_code == 429
        keys = list(redis.Redis.from_url(REDIS_URL).scan_iter(f"LIMITS:*user:{user}/*"))
        assert keys  # counted in Redis, under the user's key
    finally:
        client = redis.Redis.from_url(REDIS_URL)
        for key in client.scan_iter(f"LIMITS:*user:{user}/*"):
            client.delete(key)


@pytest.fixture
def own_redis(tmp_path):
    """A redis-server of this test's own on a free port, without persistence:
    ``(url, start, kill)``."""
    if shutil.which("redis-server") is None:
        pytest.skip("redis-server is not installed")
    server = RedisServer(tmp_path, persist=False)
    server.start()
    yield server.url, server.start, server.kill
    server.close()


def test_a_redis_outage_counts_in_memory_then_redis_again(settings, own_redis, monkeypatch):
    url, start, kill = own_redis
    monkeypatch.setattr(ratelimit, "RETRY_SECONDS", 0.2)
    client = create_app(settings.replace(rate_limit="3 per minute",
                                         rate_limit_storage=url)).test_client()
    alice = _login(client, "alice")
    assert _chat(client, alice).status_code == 200
    assert list(redis.Redis.from_url(url).scan_iter("LIMITS:*user:alice/*"))

    kill()
    # Turns go on, and the limit still holds, counted in this process meanwhile.
    assert [_chat(client, alice).status_code for _ in range(4)] == [200, 200, 200, 429]

    start()  # an empty Redis (no persistence): counting starts again there
    time.sleep(0.3)
    assert _chat(client, alice).status_code == 200
    assert list(redis.Redis.from_url(url).scan_iter("LIMITS:*user:alice/*"))


def test_setup_leaves_no_hooks_on_the_shared_blueprints(settings):
    from si_agent.server import chat, upload

    for _ in range(3):
        create_app(settings)
    assert not chat.bp.before_request_funcs and not upload.bp.before_request_funcs
