"""Fixtures for the staff console: the real app, a test client, accounts and tokens.

``app`` has no knowledge base (fast: sign-in, roles, CSRF, audit); ``kb_client`` is
an app over the shipped corpus, built once per session (about 10 s), for hit testing.
Audit entries go to the SQLite log of the test's data directory.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator, Mapping
from pathlib import Path

import jwt
import pytest

from si_agent.config.settings import Settings
from si_agent.server import create_app

ROOT = Path(__file__).resolve().parents[2]
SECRET = "test-secret-of-the-console-tests-0123456789"
PASSWORD = "correct horse battery"
_CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')


def console_settings(data_dir: Path, **changes) -> Settings:
    return Settings(
        data_dir=data_dir,
        audit_store="sqlite",
        rate_limit="1000 per minute",
        jwt_secret=SECRET,
        **{"business_dir": ROOT / "businesses", "session_store": "memory", "knowledge": "none",
           **changes},
    )


@pytest.fixture
def settings(tmp_path) -> Settings:
    return console_settings(tmp_path)


@pytest.fixture
def app(settings):
    return create_app(settings)


@pytest.fixture
def client(app):
    return app.test_client()


@pytest.fixture
def accounts(app):
    return app.config["SI_STAFF_ACCOUNTS"]


def csrf(client, path: str = "/console/login", **kwargs) -> str:
    """The CSRF token of the page at ``path`` (it also puts one in the cookie session)."""
    page = client.get(path, **kwargs)
    assert page.status_code == 200, page.status_code
    return _CSRF.search(page.get_data(as_text=True)).group(1)


def sign_in(client, name: str = "alice", password: str = PASSWORD):
    return client.post(
        "/console/login", data={"name": name, "password": password, "csrf_token": csrf(client)}
    )


def token(
    sub: str = "wang",
    roles: list[str] | None = None,
    *,
    lifetime: int = 600,
    secret: str = SECRET,
    **claims,
) -> str:
    """An access token as the deployment's gateway would issue it."""
    now = int(time.time())
    payload = {
        "sub": sub,
        "iat": now,
        "nbf": now,
        "exp": now + lifetime,
        "type": "access",
        "jti": f"jti-{sub}-{now}-{lifetime}",
        "fresh": False,
        **claims,
    }
    if roles is not None:
        payload["roles"] = roles
    return jwt.encode(payload, secret, algorithm="HS256")


class Bearer(Mapping[str, str]):
    """The ``Authorization`` header of a gateway token, minted when a request reads it.

    A module-level header with a token made at import expires while a long run
    collects and runs other tests first (CI's run takes half an hour; tokens live
    600 s), so a test module keeps this instead of a fixed string.
    """

    def __init__(self, sub: str, roles: list[str] | None = None) -> None:
        self.sub, self.roles = sub, roles

    def __getitem__(self, key: str) -> str:
        if key != "Authorization":
            raise KeyError(key)
        return f"Bearer {token(self.sub, self.roles)}"

    def __iter__(self) -> Iterator[str]:
        return iter(("Authorization",))

    def __len__(self) -> int:
        return 1


@pytest.fixture(scope="session")
def kb_app(tmp_path_factory):
    """The app over the shipped corpus (SI_KNOWLEDGE=milvus), as ``serve`` builds it."""
    app = create_app(
        console_settings(
            tmp_path_factory.mktemp("console-kb"),
            knowledge="milvus",
            kb_dir=ROOT / "rag" / "knowledge",
        )
    )
    status = app.config["SI_CONTROLLER"].knowledge.status()
    assert status["ok"], status
    return app


@pytest.fixture
def kb_client(kb_app):
    client = kb_app.test_client()
    client.environ_base["HTTP_AUTHORIZATION"] = f"Bearer {token('li', ['staff'])}"
    return client
