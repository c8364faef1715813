"""CORS: off by default; with ``SI_CORS_ORIGINS`` only the listed origins are allowed."""

from __future__ import annotations

import pytest

from si_agent.config.settings import Settings
from si_agent.errors import SettingsError
from si_agent.server import create_app

ALLOWED = "https://app.example.gov.cn"
EVIL = "https://evil.example"
ACAO = "Access-Control-Allow-Origin"


def _preflight(client, origin: str, path: str = "/api/chat"):
    return client.options(path, headers={
        "Origin": origin, "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "Authorization, Content-Type"})


def test_no_cors_headers_by_default(client, login):
    headers = {**login(), "Origin": ALLOWED}
    res = client.post("/api/chat", json={"message": "你好"}, headers=headers)
    assert res.status_code == 200 and ACAO not in res.headers
    res = _preflight(client, ALLOWED)
    assert ACAO not in res.headers and "Access-Control-Allow-Methods" not in res.headers
    res = client.post("/api/token", json={"user_id": "a"}, headers={"Origin": ALLOWED})
    assert res.status_code == 200 and ACAO not in res.headers


@pytest.fixture
def cors_client(settings):
    return create_app(settings.replace(cors_origins=(ALLOWED, "http://localhost:5173"))).test_client()


def test_allowed_origin_gets_the_headers_and_its_preflight(cors_client):
    res = _preflight(cors_client, ALLOWED)
    assert res.status_code == 200 and res.headers[ACAO] == ALLOWED
    assert "POST" in res.headers["Access-Control-Allow-Methods"]
    allowed = {h.strip().lower() for h in res.headers["Access-Control-Allow-Headers"].split(",")}
    assert {"authorization", "content-type"} <= allowed
    assert "Access-Control-Allow-Credentials" not in res.headers

    token = cors_client.post("/api/token", json={"user_id": "web"},
                             headers={"Origin": ALLOWED}).get_json()["access_token"]
    res = cors_client.post("/api/chat", json={"message": "你好"},
                           headers={"Origin": ALLOWED, "Authorization": f"Bearer {token}"})
    assert res.status_code == 200 and res.headers[ACAO] == ALLOWED
    assert "Retry-After" in res.headers["Access-Control-Expose-Headers"]
    res = cors_client.get("/api/session", headers={"Origin": "http://localhost:5173",
                                                   "Authorization": f"Bearer {token}"})
    assert res.status_code == 200 and res.headers[ACAO] == "http://localhost:5173"
    # An error answer is readable by the allowed page too (it shows the Chinese message).
    res = cors_client.get("/api/session", headers={"Origin": ALLOWED})
    assert res.status_code == 401 and res.headers[ACAO] == ALLOWED


def test_other_origins_get_no_cors_headers(cors_client):
    for origin in (EVIL, ALLOWED + ".evil.example", "http://app.example.gov.cn", "null"):
        res = _preflight(cors_client, origin)
        assert ACAO not in res.headers, origin
        res = cors_client.post("/api/token", json={"user_id": "a"}, headers={"Origin": origin})
        assert res.status_code == 200 and ACAO not in res.headers, origin
    # Only the API: the page and health checks are same-origin matters.
    res = cors_client.get("/healthz", headers={"Origin": ALLOWED})
    assert ACAO not in res.headers


def test_cors_origins_setting_is_checked():
    parsed = Settings.from_env({"SI_CORS_ORIGINS": f"{ALLOWED}/, http://localhost:5173"})
    assert parsed.cors_origins == (ALLOWED, "http://localhost:5173")
    assert Settings.from_env({}).cors_origins == ()
    for bad in ("*", "app.example.gov.cn", "https://app.example/path"):
        with pytest.raises(SettingsError, match="SI_CORS_ORIGINS must be origins"):
            Settings.from_env({"SI_CORS_ORIGINS": bad})
