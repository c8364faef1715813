"""Fixtures shared by every test directory.

``playwright_driver`` is the one Playwright driver of the test session: Playwright's
sync API allows one per thread, so the browser tests, the agent's task suite and
anything else driving Chromium in the test thread share it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

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
