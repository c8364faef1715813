"""Fixtures for browser tests: the real app on a live port, and Chromium driven by Playwright.

The tests need Debian's Chromium (``apt-get install chromium``) and the ``playwright``
package (``pip install playwright``; no ``playwright install``: the system browser is
used). Without them the tests skip, unless ``SI_REQUIRE_BROWSER`` is set (CI sets it),
in which case they fail. ``SI_CHROMIUM_PATH`` overrides ``/usr/bin/chromium``.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from si_agent.config.settings import Settings
from si_agent.server import create_app

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts" / "browser"
CHROMIUM = Path(os.environ.get("SI_CHROMIUM_PATH") or "/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
DESKTOP = {"width": 1280, "height": 800}
TIMEOUT_MS = 15_000



@pytest.fixture(scope="session")
def server_settings(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    return Settings(business_dir=ROOT / "businesses", knowledge="none",
                    data_dir=tmp_path_factory.mktemp("browser-data"),
                    session_store="memory", rate_limit="1000 per minute")


@contextmanager
def serving(app, host: str = "127.0.0.1") -> Iterator[str]:
    """``app`` (any WSGI app) served by werkzeug on a free port of ``host``; yields its
    base URL. Another loopback address (127.0.0.2) is another origin and another site
    for the browser: the widget tests serve a host page there."""
    from werkzeug.serving import make_server

    server = make_server(host, 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, name="browser-test-server", daemon=True)
    thread.start()
    try:
        yield f"http://{host}:{server.server_port}"
    finally:
        server.shutdown()
        thread.join(timeout=10)


@pytest.fixture(scope="session")
def live_server(server_settings: Settings) -> Iterator[str]:
    """The real app on a live port; yields its base URL."""
    with serving(create_app(server_settings)) as url:
        yield url


@pytest.fixture(scope="session")
def artifacts() -> Path:
    """Where screenshots go (git-ignored)."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS


@pytest.fixture
def open_page(playwright_driver, live_server: str, tmp_path: Path) -> Iterator[Callable]:
    """``open_page(viewport, preferences=None, **context_options)``: a fresh Chromium
    profile (with those Preferences, e.g. a larger default font) at the chat page.

    Each call launches Chromium with its own user data dir, so localStorage (the dev user
    id) and therefore the server session are new. Uncaught page errors fail the test.
    """
    contexts = []
    page_errors: list[str] = []

    def open_page(viewport: dict = DESKTOP, preferences: dict | None = None, **options):
        profile = tmp_path / f"profile-{len(contexts)}"
        if preferences:
            (profile / "Default").mkdir(parents=True)
            (profile / "Default" / "Preferences").write_text(json.dumps(preferences), "utf-8")
        context = playwright_driver.chromium.launch_persistent_context(
            str(profile), executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS,
            viewport=viewport, locale="zh-CN", **options,
        )
        contexts.append(context)
        context.set_default_timeout(TIMEOUT_MS)
        page = context.pages[0] if context.pages else context.new_page()
        page.on("pageerror", lambda err: page_errors.append(str(err)))
        page.goto(live_server + "/")
        page.wait_for_selector("[data-testid=app][data-ready=true]")
        return page

    yield open_page
    for context in contexts:
        context.close()
    assert not page_errors, f"uncaught errors in the page: {page_errors}"
