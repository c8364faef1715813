"""A web-form business on the page: the job's progress line, the form's refusal shown
on the failed field, and the per-field table once the form is accepted."""

from __future__ import annotations

import os
from collections.abc import Iterator

import httpx
import pytest

from si_agent.app import build_controller
from si_agent.config.settings import Settings
from si_agent.server import create_app
from tests.browser.conftest import serving
from tests.browser.test_chat_page import say
from tests.rpa.conftest import (
    BUSINESSES,
    PASSWORD,
    USER,
    applications,
    chromium,
    fault,
    portal,
)

try:
    from playwright.sync_api import expect
except ImportError:  # the fixtures skip (or fail under SI_REQUIRE_BROWSER) without it
    expect = None

pytestmark = pytest.mark.browser
__all__ = ["chromium", "portal"]  # fixtures used here


@pytest.fixture(scope="module")
def live_server(portal, tmp_path_factory) -> Iterator[str]:
    """The app over the example web-form businesses, filling the portal's forms."""
    os.environ.update(SI_PORTAL_URL=portal, SI_PORTAL_USER=USER, SI_PORTAL_PASSWORD=PASSWORD)
    httpx.post(portal + "/_admin/reset").raise_for_status()
    settings = Settings(business_dir=BUSINESSES, knowledge="none", session_store="memory",
                        data_dir=tmp_path_factory.mktemp("rpa-page"),
                        rate_limit="1000 per minute")
    with serving(create_app(settings, controller=build_controller(settings))) as url:
        yield url


def test_a_form_refusal_and_the_fields_table(open_page, portal):
    page = open_page()
    for text in ("我要把社保从杭州转到拉萨", "330122196303150178", "张伟"):
        say(page, text)
    fault(portal, delay=3.0)  # a slow portal: the progress line has time to show
    say(page, "确认")
    # Opening and filling come first; on a loaded machine they took more than expect's 5 s.
    expect(page.get_by_test_id("job-progress")).to_have_text("正在提交…", timeout=30_000)
    # The refusal arrives through the event stream: the field panel shows it.
    to_city = page.get_by_test_id("field-to_city")
    expect(to_city).to_have_attribute("data-status", "failed", timeout=60_000)
    expect(to_city.get_by_test_id("field-error")).to_have_text("该城市暂未开通线上转移")
    expect(page.get_by_test_id("message-assistant").last).to_contain_text("该城市暂未开通线上转移")
    say(page, "苏州")
    say(page, "确认")
    expect(page.get_by_test_id("state-badge")).to_have_text("已完成", timeout=60_000)
    [app] = applications(portal)
    expect(page.get_by_test_id("application-no")).to_have_text(app["application_no"])
    table = page.get_by_test_id("result-fields")
    expect(table).to_be_visible()
    expect(table.locator("tbody tr")).to_have_count(4)
    expect(table).to_contain_text("转入地")
    expect(table).to_contain_text("填写成功")
