"""Fixtures shared by every test directory.

``playwright_driver`` is the one Playwright driver of the test session: Playwright's
sync API allows one per thread, so the browser tests, the agent's task suite and
anything else driving Chromium in the test thread share it. ``redis_url``,
``redis_client`` and ``redis_prefix`` serve the store tests (sessions, audit log).
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from si_agent.session.redis import redis_reachable

CHROMIUM = Path(os.environ.get("SI_CHROMIUM_PATH") or "/usr/bin/chromium")


def _browser_required() -> bool:
    return os.environ.get("SI_REQUIRE_BROWSER", "").strip().lower() not in ("", "0", "false", "no")


def _missing() -> str | None:
    """Why the browser tests cannot run here, or None."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the playwright package is not installed (pip install playwright)"
    if not (CHROMIUM.is_file() and os.access(CHROMIUM, os.X_OK)):
        return f"{CHROMIUM} is missing (apt-get install chromium)"
    return None


@pytest.fixture(scope="session")
def playwright_driver() -> Iterator[object]:
    """The started Playwright driver; skips (or fails under SI_REQUIRE_BROWSER) without a browser."""
    problem = _missing()
    if problem:
        if _browser_required():
            pytest.fail(f"SI_REQUIRE_BROWSER is set but {problem}", pytrace=False)
        pytest.skip(f"browser tests skipped: {problem}; set SI_REQUIRE_BROWSER=1 to fail instead")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as driver:
        yield driver


# -- Redis, for the store tests (sessions, audit) ------------------------------------------
# db 15 of SI_TEST_REDIS_URL (default redis://127.0.0.1:6379/15), under a key prefix of the
# test's own that is deleted afterwards. When Redis does not answer, the tests that need it
# fail with an explanation, unless SI_SKIP_REDIS=1 makes them skip.

REDIS_URL = os.environ.get("SI_TEST_REDIS_URL", "redis://127.0.0.1:6379/15")


@pytest.fixture(scope="session")
def redis_url() -> str:
    """The test Redis URL, after checking that the server answers."""
    if not redis_reachable(REDIS_URL, timeout=1.0):
        message = (
            f"Redis at {REDIS_URL} does not answer PING. Start it (or point "
            "SI_TEST_REDIS_URL at one), or set SI_SKIP_REDIS=1 to skip the redis tests."
        )
        if os.environ.get("SI_SKIP_REDIS") == "1":
            pytest.skip(message)
        pytest.fail(message, pytrace=False)
    return REDIS_URL


@pytest.fixture
def redis_client(redis_url: str) -> Iterator[Any]:
    import redis

    client = redis.Redis.from_url(redis_url)
    yield client
    client.close()


@pytest.fixture
def redis_prefix(redis_client: Any) -> Iterator[str]:
    """A key prefix of this test's own; its keys are deleted afterwards."""
    prefix = f"si_agent:test:{uuid.uuid4().hex}:"
    yield prefix
    keys = list(redis_client.scan_iter(match=prefix + "*"))
    if keys:
        redis_client.delete(*keys)


@pytest.fixture
def fake():
    """A fake OpenAI-compatible server (``si_agent.testing.FakeOpenAI``) for one test;
    ``fake.base_url`` is its address, ``fake.push(...)`` scripts its answers."""
    from si_agent.testing import FakeOpenAI

    server = FakeOpenAI()
    server.base_url = server.start()
    yield server
    server.stop()
