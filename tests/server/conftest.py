"""Fixtures for the HTTP API: ``app`` and ``client`` built from a test config."""

from __future__ import annotations

from pathlib import Path

import pytest

from si_agent.config.settings import Settings
from si_agent.server import create_app

ROOT = Path(__file__).resolve().parents[2]


# Tests sign their own tokens (expired, forged) with the app's secret, so it is given
# here; without one, dev mode makes a random secret in the data dir (test_tokens.py).
TEST_SECRET = "test-secret-of-the-api-tests-0123456789"


@pytest.fixture
def settings(tmp_path) -> Settings:
    return Settings(business_dir=ROOT / "businesses", knowledge="none", data_dir=tmp_path,
                    session_store="memory", rate_limit="1000 per minute",
                    jwt_secret=TEST_SECRET)


@pytest.fixture
def app(settings):
    return create_app(settings)


@pytest.fixture
def client(app):
    return app.test_client()


@pytest.fixture
def login(client):
    def login(user_id: str = "alice") -> dict[str, str]:
        token = client.post("/api/token", json={"user_id": user_id}).get_json()["access_token"]
        return {"Authorization": f"Bearer {token}"}

    return login
