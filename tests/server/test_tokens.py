"""The token lifecycle through the real API (issue 23.5): refresh tokens rotate and a
reused one revokes its family, logout and session reset revoke, the denylist lives in
the session store's backend (memory, SQLite, Redis) and expires with the tokens, and
dev mode signs with a random secret of the data directory."""

from __future__ import annotations

import os
import stat
import time

import jwt as pyjwt
import pytest

from si_agent.config.dev_secret import DEV_SECRET_FILE, dev_secret, with_dev_secret
from si_agent.config.settings import DEV_JWT_SECRET, Settings
from si_agent.server import create_app
from si_agent.session.denylist import MemoryDenylist, RedisDenylist, SQLiteDenylist
from si_agent.testing.processes import api_env, served_api
from tests.server.conftest import ROOT

STORES = ["memory", "sqlite", pytest.param("redis", marks=pytest.mark.redis)]


@pytest.fixture(params=STORES)
def store_settings(request, tmp_path) -> Settings:
    extra = {}
    if request.param == "redis":
        url = request.getfixturevalue("redis_url")
        extra = {"redis_url": url, "redis_prefix": request.getfixturevalue("redis_prefix")}
    return Settings(business_dir=ROOT / "businesses", knowledge="none", data_dir=tmp_path,
                    session_store=request.param, rate_limit="1000 per minute",
                    engine="rules", **extra)


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def error(response) -> tuple[int, str]:
    return response.status_code, (response.get_json() or {}).get("error", {}).get("code", "")


def tokens(client, user: str = "alice") -> dict:
    return client.post("/api/token", json={"user_id": user}).get_json()


def session(client, token: str):
    return client.get("/api/session", headers=bearer(token))


def refresh(client, token: str):
    return client.post("/api/token/refresh", headers=bearer(token))


def test_refresh_rotates_and_a_reused_refresh_token_revokes_its_family(store_settings):
    client = create_app(store_settings).test_client()
    first = tokens(client)
    other = tokens(client)  # the same user on another device: another family
    second = refresh(client, first["refresh_token"])
    assert second.status_code == 200
    second = second.get_json()
    assert second["refresh_token"] != first["refresh_token"]
    assert second["refresh_expires_in"] == store_settings.jwt_refresh_expires
    secret = client.application.config["SI_SETTINGS"].jwt_secret
    old, new = (pyjwt.decode(t, secret, algorithms=["HS256"])
                for t in (first["refresh_token"], second["refresh_token"]))
    assert old["fam"] == new["fam"] and old["jti"] != new["jti"] and new["type"] == "refresh"
    assert session(client, second["access_token"]).status_code == 200
    third = refresh(client, second["refresh_token"]).get_json()  # the chain goes on

    # The first refresh token again (a stolen copy): refused, and the family is revoked.
    assert error(refresh(client, first["refresh_token"])) == (401, "token_reused")
    for token in (first["access_token"], second["access_token"], third["access_token"]):
        assert error(session(client, token)) == (401, "token_revoked")
    assert error(refresh(client, third["refresh_token"])) == (401, "token_revoked")
    assert session(client, other["access_token"]).status_code == 200
    assert refresh(client, other["refresh_token"]).status_code == 200


def test_logout_revokes_the_access_token_and_its_refresh_family(store_settings):
    client = create_app(store_settings).test_client()
    mine, other = tokens(client), tokens(client)
    rotated = refresh(client, mine["refresh_token"]).get_json()
    out = client.post("/api/logout", headers=bearer(rotated["access_token"]))
    assert out.status_code == 204 and out.get_data() == b""
    for token in (mine["access_token"], rotated["access_token"]):
        assert error(session(client, token)) == (401, "token_revoked")
    assert error(refresh(client, rotated["refresh_token"])) == (401, "token_revoked")
    message = session(client, rotated["access_token"]).get_json()["error"]["message"]
    assert "重新登录" in message
    assert error(client.post("/api/logout", headers=bearer(rotated["access_token"]))) == \
        (401, "token_revoked")
    assert error(client.post("/api/logout")) == (401, "missing_token")
    assert session(client, other["access_token"]).status_code == 200  # another family


def test_delete_session_revokes_the_access_token_used(store_settings):
    client = create_app(store_settings).test_client()
    used, kept = tokens(client), tokens(client)
    client.post("/api/chat", headers=bearer(used["access_token"]), json={"message": "我要转社保"})
    reset = client.delete("/api/session", headers=bearer(used["access_token"]))
    assert reset.status_code == 200 and reset.get_json()["state"] == "idle"
    assert error(session(client, used["access_token"])) == (401, "token_revoked")
    assert error(client.post("/api/chat", headers=bearer(used["access_token"]),
                             json={"message": "你好"})) == (401, "token_revoked")
    # Only that token: a reset is not a logout.
    assert session(client, kept["access_token"]).get_json()["state"] == "idle"
    assert refresh(client, used["refresh_token"]).status_code == 200


def test_a_revoked_token_stays_revoked_after_a_restart(tmp_path):
    settings = Settings(business_dir=ROOT / "businesses", knowledge="none", data_dir=tmp_path,
                        session_store="sqlite", engine="rules")
    before = create_app(settings).test_client()
    pair = tokens(before)
    assert before.post("/api/logout", headers=bearer(pair["access_token"])).status_code == 204
    after = create_app(settings).test_client()  # same data dir: same secret, same denylist
    assert error(session(after, pair["access_token"])) == (401, "token_revoked")
    assert session(after, tokens(after)["access_token"]).status_code == 200


def test_revocation_is_checked_after_the_verified_token_cache(settings):
    client = create_app(settings).test_client()
    pair = tokens(client)
    manager = client.application.extensions["flask-jwt-extended"]
    for _ in range(3):
        assert session(client, pair["access_token"]).status_code == 200
    assert manager.verified_tokens().hits >= 2  # the token is remembered ...
    client.post("/api/logout", headers=bearer(pair["access_token"]))
    assert error(session(client, pair["access_token"])) == (401, "token_revoked")  # ... yet refused


# -- the denylist backends: entries expire with what they revoke ------------------------


@pytest.fixture(params=STORES)
def denylist(request, tmp_path):
    if request.param == "memory":
        return MemoryDenylist()
    if request.param == "sqlite":
        return SQLiteDenylist(tmp_path / "sessions.db")
    client = request.getfixturevalue("redis_client")
    return RedisDenylist(client, request.getfixturevalue("redis_prefix") + "revoked:")


def test_denylist_entries_expire_with_the_token(denylist):
    now = time.time()
    assert denylist.add("jti:a", now + 1.0) is True
    assert denylist.add("jti:a", now + 1.0) is False  # already listed: a reuse
    assert denylist.add("jti:gone", now - 1) is True  # already expired: nothing to keep
    assert denylist.contains("jti:a") and denylist.contains("fam:x", "jti:a")
    assert not denylist.contains("jti:b") and not denylist.contains("jti:gone")
    assert not denylist.contains()
    time.sleep(1.3)
    assert not denylist.contains("jti:a")
    assert denylist.add("jti:a", time.time() + 60) is True  # listed anew after its expiry


@pytest.mark.redis
def test_redis_entries_carry_the_remaining_life_of_the_token(redis_url, redis_client,
                                                             redis_prefix, tmp_path):
    settings = Settings(business_dir=ROOT / "businesses", knowledge="none", data_dir=tmp_path,
                        session_store="redis", redis_url=redis_url, redis_prefix=redis_prefix,
                        engine="rules", jwt_expires=120, jwt_refresh_expires=600)
    client = create_app(settings).test_client()
    pair = tokens(client)
    client.post("/api/logout", headers=bearer(pair["access_token"]))
    claims = pyjwt.decode(pair["access_token"], client.application.config["SI_SETTINGS"]
                          .jwt_secret, algorithms=["HS256"])
    jti_ttl = redis_client.pttl(f"{redis_prefix}revoked:jti:{claims['jti']}") / 1000
    fam_ttl = redis_client.pttl(f"{redis_prefix}revoked:fam:{claims['fam']}") / 1000
    assert 100 < jti_ttl <= 120  # until the access token's exp
    assert 600 < fam_ttl <= 660  # the longest life of a token of the family


# -- the development secret --------------------------------------------------------------


def test_dev_mode_signs_with_a_random_secret_of_the_data_dir(tmp_path):
    one, two = tmp_path / "one", tmp_path / "two"
    first, second = dev_secret(one), dev_secret(two)
    assert first != second and len(first) >= 32 and DEV_JWT_SECRET not in (first, second)
    assert dev_secret(one) == first  # a restart reads the same one
    path = one / DEV_SECRET_FILE
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    os.chmod(path, 0o644)
    assert dev_secret(one) == first and stat.S_IMODE(path.stat().st_mode) == 0o600

    settings = Settings(business_dir=ROOT / "businesses", knowledge="none", data_dir=one,
                        session_store="memory")
    assert with_dev_secret(settings).jwt_secret == first
    assert with_dev_secret(settings.replace(jwt_secret="x" * 40)).jwt_secret == "x" * 40
    assert with_dev_secret(settings.replace(auth_mode="prod")).jwt_secret == DEV_JWT_SECRET

    # A token signed with the constant from the source is no token here.
    client = create_app(settings).test_client()
    now = int(time.time())
    forged = pyjwt.encode({"sub": "mallory", "type": "access", "fresh": False, "jti": "j",
                           "roles": ["admin"], "iat": now, "nbf": now, "exp": now + 60},
                          DEV_JWT_SECRET, algorithm="HS256")
    assert error(client.get("/api/admin/audit", headers=bearer(forged))) == \
        (401, "invalid_token")
    issued = tokens(client)["access_token"]
    assert pyjwt.decode(issued, first, algorithms=["HS256"])["sub"] == "alice"
    other = create_app(settings.replace(data_dir=two)).test_client()
    assert error(session(other, issued)) == (401, "invalid_token")


# -- two processes sharing the store -------------------------------------------------------


@pytest.mark.parametrize("store", ["sqlite", pytest.param("redis", marks=pytest.mark.redis)])
def test_two_processes_share_the_secret_and_the_revocations(store, tmp_path, request):
    extra = {}
    if store == "redis":
        extra = {"redis_url": request.getfixturevalue("redis_url"),
                 "redis_prefix": request.getfixturevalue("redis_prefix")}
    env = api_env(tmp_path / "data", session_store=store, **extra)
    with served_api(env, user="alice", log=tmp_path / "a.log") as a, \
            served_api(env, user="alice", log=tmp_path / "b.log") as b:
        assert not (tmp_path / "data" / DEV_SECRET_FILE).stat().st_mode & 0o077
        pair = a.post("/api/token", json={"user_id": "alice"}).json()
        assert b.get("/api/session", headers=bearer(pair["access_token"])).status_code == 200
        # Rotated in A, reused in B: the family is revoked in both.
        rotated = a.post("/api/token/refresh", headers=bearer(pair["refresh_token"])).json()
        reused = b.post("/api/token/refresh", headers=bearer(pair["refresh_token"]))
        assert reused.status_code == 401 and reused.json()["error"]["code"] == "token_reused"
        for server in (a, b):
            got = server.get("/api/session", headers=bearer(rotated["access_token"]))
            assert got.status_code == 401 and got.json()["error"]["code"] == "token_revoked"
        # Logged out in B: refused in A too.
        assert b.post("/api/logout").status_code == 204
        assert a.get("/api/session", headers=b.headers).json()["error"]["code"] == \
            "token_revoked"
        assert a.get("/api/session").status_code == 200  # A's own token, another family
