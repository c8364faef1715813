"""The web page lists the services as buttons when asked "有哪些业务", in idle and mid-flow;
a button starts its business."""

from __future__ import annotations

import pytest

from tests.browser.test_chat_page import say

try:
    from playwright.sync_api import expect
except ImportError:  # the fixtures skip (or fail under SI_REQUIRE_BROWSER) without it
    expect = None

pytestmark = pytest.mark.browser


def test_the_services_are_buttons_that_start_a_business(open_page):
    page = open_page()
    reply = say(page, "有哪些业务可以办")
    assert "社保卡挂失" in reply and "养老金查询" in reply
    services = page.get_by_test_id("services")
    expect(services).to_be_visible()
    services.get_by_role("button", name="社保卡挂失").click()
    expect(page.get_by_test_id("business-name")).to_have_text("社保卡挂失")
    expect(services).to_be_hidden()

    reply = say(page, "你们还能办些啥")
    assert "社保卡申领" in reply
    expect(services).to_be_visible()
    expect(page.get_by_test_id("business-name")).to_have_text("社保卡挂失")
