"""Fixtures for the rpa tests: the demo portal in a subprocess on a free port, and
controllers over the example web-form businesses (examples/portal/businesses).

The rpa executor drives Debian's Chromium; without it (or the playwright package)
these tests skip, unless ``SI_REQUIRE_BROWSER`` is set (CI), when they fail.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from si_agent.app import build_controller
from si_agent.config.settings import Settings
from si_agent.flow.controller import Controller
from si_agent.flow.result import TurnResult
from si_agent.testing.processes import PORTAL_PASSWORD, PORTAL_USER, demo_portal

ROOT = Path(__file__).resolve().parents[2]
BUSINESSES = ROOT / "examples" / "portal" / "businesses"
CHROMIUM = Path(os.environ.get("SI_CHROMIUM_PATH") or "/usr/bin/chromium")
USER, PASSWORD = PORTAL_USER, PORTAL_PASSWORD

pytestmark = pytest.mark.browser


@pytest.fixture(scope="session")
def chromium() -> str:
    problem = None
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        problem = "the playwright package is not installed"
    if problem is None and not os.access(CHROMIUM, os.X_OK):
        problem = f"{CHROMIUM} is missing (apt-get install chromium)"
    if problem:
        if os.environ.get("SI_REQUIRE_BROWSER", "").lower() not in ("", "0", "false", "no"):
            pytest.fail(f"SI_REQUIRE_BROWSER is set but {problem}", pytrace=False)
        pytest.skip(f"rpa tests skipped: {problem}")
    return str(CHROMIUM)


@pytest.fixture(scope="session")
def portal(tmp_path_factory, chromium) -> Iterator[str]:
    """The demo portal (si-agent portal) in its own process; its base URL."""
    with demo_portal(tmp_path_factory.mktemp("portal"), user=USER, password=PASSWORD) as url:
        yield url


@pytest.fixture
def fresh_portal(portal, monkeypatch) -> str:
    """The portal with no drafts or applications, and the env the businesses read."""
    httpx.post(portal + "/_admin/reset").raise_for_status()
    monkeypatch.setenv("SI_PORTAL_URL", portal)
    monkeypatch.setenv("SI_PORTAL_USER", USER)
    monkeypatch.setenv("SI_PORTAL_PASSWORD", PASSWORD)
    return portal


def applications(portal: str) -> list[dict]:
    return httpx.get(portal + "/_admin/applications").json()


def fault(portal: str, **spec) -> None:
    httpx.post(portal + "/_admin/fail_next", json={"count": 1, **spec}).raise_for_status()


@pytest.fixture
def settings(tmp_path, chromium) -> Settings:
    return Settings(business_dir=BUSINESSES, data_dir=tmp_path, session_store="memory",
                    knowledge="none", rpa_chromium=chromium)


@pytest.fixture
def ctl(settings, fresh_portal) -> Iterator[Controller]:
    controller = build_controller(settings, engine="rules")
    yield controller
    controller.runner.shutdown()


def settle(ctl: Controller, user: str = "u", timeout: float = 60.0) -> TurnResult:
    """The session once its job has finished (its outcome applied)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        turn = ctl.current(user)
        if turn.state != "executing":
            return turn
        time.sleep(0.2)
    raise AssertionError(f"the job of {user} did not finish in {timeout} s")


def talk(ctl: Controller, *texts: str, user: str = "u") -> TurnResult:
    turn = None
    for text in texts:
        turn = ctl.handle(user, text)
    return turn


@pytest.fixture(scope="session")
def catalog():
    from si_agent.config.loader import load_businesses

    return load_businesses(ROOT / "businesses")
