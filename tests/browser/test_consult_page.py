"""A consultation on the chat page: the panel groups the slots by theme, with each
theme's progress, skipped slots marked, the current theme highlighted, and a reset."""

from __future__ import annotations

import pytest

try:
    from playwright.sync_api import expect
except ImportError:  # the fixtures skip (or fail under SI_REQUIRE_BROWSER) without it
    expect = None

from tests.browser.test_chat_page import say

pytestmark = pytest.mark.browser

THEMES = ["投保人基本信息", "家庭结构", "需求与偏好", "已有保障", "健康告知", "补充说明"]


def test_grouped_panel_progress_skips_and_reset(open_page, artifacts):
    page = open_page()
    reply = say(page, "我想咨询保险")
    assert "请问您的年龄、职业和大概年收入区间" in reply
    groups = page.locator(".field-group")
    expect(groups).to_have_count(len(THEMES))
    for i, label in enumerate(THEMES):
        expect(page.get_by_test_id(f"group-{i}").locator(".group-label")).to_have_text(label)
    first, second = page.get_by_test_id("group-0"), page.get_by_test_id("group-1")
    expect(first).to_have_attribute("aria-current", "true")
    expect(first.get_by_test_id("group-progress")).to_have_text("0/3")

    reply = say(page, "38岁，收入不想说")
    assert "收到反馈：年龄：38岁。" in reply and "年收入区间先空着" in reply
    expect(first.get_by_test_id("group-progress")).to_have_text("2/3")
    income = page.get_by_test_id("field-income_range")
    expect(income).to_have_attribute("data-status", "skipped")
    expect(income.get_by_test_id("field-status")).to_have_text("未提供")
    expect(page.get_by_test_id("field-age").get_by_test_id("field-value")).to_have_text("38岁")

    say(page, "做设计的，家里主要靠我，两个孩子")  # completes two themes at once
    expect(first.get_by_test_id("group-progress")).to_have_text("3/3")
    expect(second.get_by_test_id("group-progress")).to_have_text("2/2")
    expect(first).not_to_have_attribute("aria-current", "true")
    expect(page.get_by_test_id("group-2")).to_have_attribute("aria-current", "true")
    expect(page.locator("#toggle-count")).to_contain_text("5/11")
    page.screenshot(path=artifacts / "consult-01-grouped-panel.png")

    page.get_by_test_id("reset").click()
    expect(page.get_by_test_id("ask-text")).to_contain_text("【保险需求咨询】")  # asked first
    page.get_by_test_id("ask-reset").click()
    expect(groups).to_have_count(0)
    expect(page.get_by_test_id("fields-empty")).to_be_visible()
    expect(page.get_by_test_id("state-badge")).to_have_text("空闲")
