"""The web page while switching business: the suspended one shows in the panel with a
"继续办理" button that takes it up again, values kept; small talk and field help."""

from __future__ import annotations

import pytest

from tests.browser.test_chat_page import click, expect_field, say

try:
    from playwright.sync_api import expect
except ImportError:  # the fixtures skip (or fail under SI_REQUIRE_BROWSER) without it
    expect = None

pytestmark = pytest.mark.browser


def test_a_suspended_business_is_shown_and_resumed(open_page, artifacts):
    page = open_page()
    say(page, "社保卡丢了，身份证号330122196303150178")
    expect(page.get_by_test_id("business-name")).to_have_text("社保卡挂失")
    expect(page.get_by_test_id("suspended")).to_be_hidden()

    reply = say(page, "算了先不挂失了，帮我查下缴费记录")
    assert "要先办理【参保缴费记录查询】吗" in reply and "当前业务会为您保留" in reply
    expect(page.get_by_test_id("business-name")).to_have_text("社保卡挂失")

    say(page, "是的")
    expect(page.get_by_test_id("business-name")).to_have_text("参保缴费记录查询")
    suspended = page.get_by_test_id("suspended-card_loss")
    expect(suspended).to_be_visible()
    expect(suspended).to_contain_text("社保卡挂失")
    expect(suspended).to_contain_text("已填写1项")
    page.screenshot(path=artifacts / "switch-01-suspended.png")

    reply = say(page, "330122196303150178，2016年到2018年")
    assert "刚才的【社保卡挂失】还没办完，要继续吗" in reply
    expect(page.get_by_test_id("state-badge")).to_have_text("已完成")

    reply = click(page, "resume")
    assert "继续办理【社保卡挂失】" in reply
    expect(page.get_by_test_id("business-name")).to_have_text("社保卡挂失")
    expect_field(page, "id_number", "collected", "3301**********0178")
    expect(page.get_by_test_id("field-name")).to_have_attribute("aria-current", "step")
    expect(page.get_by_test_id("suspended")).to_be_hidden()


def test_help_refusal_and_small_talk(open_page):
    page = open_page()
    say(page, "算养老金，60岁退休，缴费30年")
    reply = say(page, "社平工资是啥？")
    assert "社平工资" in reply and "请问当地上年度职工月平均工资" in reply
    reply = say(page, "这个不方便说")
    assert "取消" in reply
    expect(page.get_by_test_id("field-avg_wage")).to_have_attribute("data-status", "pending")
    assert "12333" in say(page, "转人工")
    say(page, "取消")
    reply = say(page, "谢谢")
    assert "请问您想办理什么" not in reply
