"""Fixtures for the agent's task suite: the demo portal in a subprocess, one
Chromium page logged in to it, and the fake OpenAI-compatible server, each shared
by a test module. Without Chromium (or playwright) these tests skip, unless
``SI_REQUIRE_BROWSER`` is set, when they fail (the ``chromium`` fixture)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from si_agent.testing import FakeOpenAI
from si_agent.testing.agent_suite import PortalProcess, log_in
from tests.rpa.conftest import chromium  # noqa: F401  (the fixture)

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def suite_portal(chromium) -> Iterator[str]:  # noqa: F811
    with PortalProcess() as portal:
        yield portal.url


@pytest.fixture(scope="module")
def page(playwright_driver, chromium, suite_portal) -> Iterator[Any]:  # noqa: F811
    """A Chromium page logged in to the portal (one browser per module, on the test
    session's one Playwright driver)."""
    browser = playwright_driver.chromium.launch(executable_path=chromium)
    try:
        page = browser.new_context(locale="zh-CN").new_page()
        page.set_default_timeout(15_000)
        log_in(page, suite_portal)
        yield page
    finally:
        browser.close()


@pytest.fixture(scope="module")
def fake_model() -> Iterator[tuple[FakeOpenAI, str]]:
    """The fake OpenAI-compatible server and its base URL."""
    fake = FakeOpenAI()
    url = fake.start()
    try:
        yield fake, url
    finally:
        fake.stop()
