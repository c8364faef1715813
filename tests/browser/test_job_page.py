"""The page follows a long-running submission: progress in a note, then the outcome.

The server's ``social_transfer`` runs on a long-running executor (like a web form
filled by RPA) that the test releases; everything else is the real app and page.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from si_agent.config.loader import load_businesses
from si_agent.config.model import Api
from si_agent.config.settings import Settings
from si_agent.engine.rules import RuleEngine
from si_agent.executor import Executors
from si_agent.flow.controller import Controller
from si_agent.server import create_app
from si_agent.session import MemoryStore
from si_agent.testing.portal import SlowPortal

from .conftest import ROOT, serving

try:
    from playwright.sync_api import expect
except ImportError:  # the fixtures skip (or fail under SI_REQUIRE_BROWSER) without it
    expect = None

pytestmark = pytest.mark.browser
NUMBER = "SI20261201888888"


@pytest.fixture(scope="module")
def portal() -> Iterator[SlowPortal]:
    portal = SlowPortal("page_portal", NUMBER, "正在网上办事大厅填写表单…")
    yield portal
    portal.release.set()


@pytest.fixture(scope="module")
def live_server(tmp_path_factory, portal) -> Iterator[str]:
    """The real app with a long-running executor for social_transfer."""

    settings = Settings(business_dir=ROOT / "businesses", knowledge="none",
                        data_dir=tmp_path_factory.mktemp("job-page"), session_store="memory",
                        rate_limit="1000 per minute")
    catalog = load_businesses(settings.business_dir)
    catalog["social_transfer"] = catalog["social_transfer"].model_copy(update={"api": Api(
        kind="page_portal", result_template="已在网上办事大厅提交，受理编号：{application_no}。")})
    executors = Executors(settings, executors={"page_portal": portal})
    controller = Controller(catalog, MemoryStore(), RuleEngine(catalog), executors)
    try:
        with serving(create_app(settings, controller=controller)) as url:
            yield url
    finally:
        executors.close()


def test_the_page_follows_a_long_running_submission(open_page, portal, artifacts):
    page = open_page()
    box = page.get_by_test_id("message-input")
    replies = page.get_by_test_id("message-assistant")
    for i, text in enumerate(("我要转社保", "从杭州转到苏州", "330122196303150178", "张伟",
                              "确认")):
        box.fill(text)
        box.press("Enter")
        expect(replies).to_have_count(i + 2)  # the greeting, then one reply per message
        expect(page.get_by_test_id("app")).to_have_attribute("data-busy", "false")
    expect(replies.last).to_contain_text("申请已提交，正在办理")
    note = page.get_by_test_id("job-progress")
    expect(note).to_have_text("正在网上办事大厅填写表单…")
    page.screenshot(path=str(artifacts / "job-progress.png"))
    portal.release.set()
    expect(replies.last).to_contain_text(f"受理编号：{NUMBER}")
    expect(note).to_have_count(0)
    page.screenshot(path=str(artifacts / "job-done.png"))
