"""The web chat page in Chromium: a full business on desktop, the drawer on a phone, errors.

Screenshots of key moments go to ``test-artifacts/browser/``.
"""

from __future__ import annotations

import json
import re

import pytest

try:
    from playwright.sync_api import Page, expect
except ImportError:  # the fixtures skip (or fail under SI_REQUIRE_BROWSER) without it
    Page = expect = None

pytestmark = pytest.mark.browser

PHONE = {"width": 390, "height": 844}
ZHANG_WEI_ID = "330122196303150178"
APPLICATION_NO = re.compile(r"SI\d{14}")


def say(page: Page, text: str) -> str:
    """Type ``text``, press Enter, wait for the streamed reply; return the reply text."""
    box = page.get_by_test_id("message-input")
    box.fill(text)
    return _await_reply(page, lambda: box.press("Enter"))


def click(page: Page, testid: str) -> str:
    """Click a quick-action button and wait for the reply it triggers."""
    return _await_reply(page, page.get_by_test_id(testid).click)


def _await_reply(page: Page, action) -> str:
    replies = page.get_by_test_id("message-assistant")
    before = replies.count()
    action()
    expect(replies).to_have_count(before + 1)
    expect(replies.last).to_have_attribute("data-streaming", "false")
    expect(page.get_by_test_id("app")).to_have_attribute("data-busy", "false")
    return replies.last.get_by_test_id("message-text").inner_text()


def last_user_text(page: Page):
    return page.get_by_test_id("message-user").last.get_by_test_id("message-text")


def expect_field(page: Page, key: str, status: str, value: str | None = None) -> None:
    field = page.get_by_test_id(f"field-{key}")
    expect(field).to_have_attribute("data-status", status)
    if value is not None:
        expect(field.get_by_test_id("field-value")).to_have_text(value)


def test_social_transfer_on_desktop(open_page, artifacts):
    page = open_page()
    chat_types = []
    page.on("response", lambda r: r.url.endswith("/api/chat")
            and chat_types.append(r.headers.get("content-type", "")))
    badge = page.get_by_test_id("state-badge")
    expect(badge).to_have_text("空闲")
    expect(page.get_by_test_id("panel-toggle")).to_be_hidden()
    expect(page.get_by_test_id("panel")).to_be_visible()
    page.screenshot(path=artifacts / "desktop-01-start.png")

    reply = say(page, "我要办理社保关系转移")
    assert "开始为您办理【社保关系转移】" in reply
    expect(badge).to_have_text("信息收集中")
    expect(page.get_by_test_id("business-name")).to_have_text("社保关系转移")
    for key in ("from_city", "to_city", "id_number", "name"):
        expect_field(page, key, "pending")
    expect(page.get_by_test_id("field-from_city")).to_have_attribute("aria-current", "step")

    say(page, "杭州")
    expect_field(page, "from_city", "collected", "杭州市")
    expect(badge).to_have_text("信息收集中")

    say(page, "苏州")
    expect_field(page, "to_city", "collected", "苏州市")
    expect(badge).to_have_text("信息收集中")

    reply = say(page, ZHANG_WEI_ID)
    expect_field(page, "id_number", "collected", "3301**********0178")
    assert ZHANG_WEI_ID not in reply
    assert ZHANG_WEI_ID not in page.get_by_test_id("panel").inner_text()
    expect(last_user_text(page)).to_have_text("3301**********0178")
    expect(badge).to_have_text("信息收集中")
    page.screenshot(path=artifacts / "desktop-02-collecting.png")

    reply = say(page, "张伟")
    expect_field(page, "name", "collected", "张伟")
    expect(badge).to_have_text("待确认")
    assert "· 转出城市：杭州市\n· 转入城市：苏州市" in reply, "line breaks are kept"
    for testid in ("confirm", "modify", "cancel"):
        expect(page.get_by_test_id(testid)).to_be_visible()
    expect(page.get_by_test_id("retry")).to_be_hidden()
    expect(page.get_by_test_id("confirm")).to_have_text("确认提交")
    page.screenshot(path=artifacts / "desktop-03-confirming.png")

    reply = click(page, "confirm")
    number = APPLICATION_NO.search(reply)
    assert number, reply
    expect(badge).to_have_text("已完成")
    expect(page.get_by_test_id("application-no")).to_have_text(number.group())
    expect(page.get_by_test_id("confirm")).to_be_hidden()
    expect(last_user_text(page)).to_have_text("确认")
    expect(page.get_by_test_id("message-input")).to_be_focused()
    page.screenshot(path=artifacts / "desktop-04-done.png")

    assert len(chat_types) == 6 and all(t.startswith("text/event-stream") for t in chat_types)


def test_phone_drawer_and_suggestion(open_page, artifacts):
    page = open_page(PHONE, device_scale_factor=2, is_mobile=True, has_touch=True)
    panel = page.get_by_test_id("panel")
    toggle = page.get_by_test_id("panel-toggle")
    expect(panel).to_be_hidden()
    expect(toggle).to_be_visible()
    expect(toggle).to_have_attribute("aria-expanded", "false")
    page.screenshot(path=artifacts / "phone-01-start.png")

    reply = say(page, "社保转移需要什么材料？")
    assert "社保关系转移" in reply
    chip = page.get_by_test_id("suggestion")
    expect(chip).to_be_visible()
    expect(chip).to_contain_text("社保关系转移")
    expect(page.get_by_test_id("state-badge")).to_have_text("空闲")
    page.screenshot(path=artifacts / "phone-02-suggestion.png")

    reply = click(page, "suggestion")
    assert "开始为您办理【社保关系转移】" in reply
    expect(chip).to_be_hidden()
    expect(last_user_text(page)).to_have_text("办理")
    expect(panel).to_be_hidden()

    say(page, "杭州")
    expect(toggle).to_contain_text("1/4")
    page.screenshot(path=artifacts / "phone-03-collecting.png")
    toggle.click()
    expect(panel).to_be_visible()
    expect(toggle).to_have_attribute("aria-expanded", "true")
    expect(page.get_by_test_id("panel-close")).to_be_focused()
    expect(page.get_by_test_id("state-badge")).to_have_text("信息收集中")
    expect(page.get_by_test_id("business-name")).to_have_text("社保关系转移")
    expect(page.get_by_test_id("field-from_city")).to_be_visible()
    expect_field(page, "from_city", "collected", "杭州市")
    expect_field(page, "to_city", "pending")
    page.wait_for_timeout(300)  # let the slide-in finish before the picture
    page.screenshot(path=artifacts / "phone-04-drawer.png")

    page.keyboard.press("Escape")
    expect(panel).to_be_hidden()
    expect(toggle).to_be_focused()
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= PHONE["width"], "no horizontal scrolling on a phone"


def test_failed_submission_offers_retry(open_page, server_settings, artifacts):
    from si_agent.demo_backend import fail_next

    page = open_page()
    say(page, f"社保转移，从杭州转到苏州，身份证号{ZHANG_WEI_ID}，我叫张伟")
    expect(page.get_by_test_id("state-badge")).to_have_text("待确认")
    fail_next(server_settings.demo_backend_db, 1)
    reply = click(page, "confirm")
    assert "提交未成功" in reply
    expect(page.get_by_test_id("state-badge")).to_have_text("提交失败")
    for testid, shown in (("retry", True), ("cancel", True), ("confirm", False), ("modify", False)):
        expect(page.get_by_test_id(testid)).to_be_visible(visible=shown)
    page.screenshot(path=artifacts / "desktop-05-failed.png")

    reply = click(page, "retry")
    assert APPLICATION_NO.search(reply), reply
    expect(page.get_by_test_id("state-badge")).to_have_text("已完成")
    expect(page.get_by_test_id("retry")).to_be_hidden()


def test_modify_and_cancel_while_confirming(open_page):
    page = open_page()
    say(page, f"社保转移，从杭州转到苏州，身份证号{ZHANG_WEI_ID}，我叫张伟")
    page.get_by_test_id("modify").click()
    box = page.get_by_test_id("message-input")
    expect(box).to_have_value("修改")
    expect(box).to_be_focused()
    box.press("End")
    box.type("转入城市")
    box.press("Enter")
    expect(page.get_by_test_id("app")).to_have_attribute("data-busy", "false")
    expect(page.get_by_test_id("state-badge")).to_have_text("信息收集中")
    say(page, "南京")
    expect_field(page, "to_city", "collected", "南京市")
    expect(page.get_by_test_id("state-badge")).to_have_text("待确认")

    reply = click(page, "cancel")
    assert "已为您取消【社保关系转移】" in reply
    expect(page.get_by_test_id("state-badge")).to_have_text("空闲")
    expect(page.get_by_test_id("actions")).to_be_hidden()


def test_input_checks_and_reset(open_page, artifacts):
    page = open_page()
    chat_requests = []
    page.on("request", lambda r: "/api/chat" in r.url and chat_requests.append(r))
    box = page.get_by_test_id("message-input")
    toast = page.get_by_test_id("toast")

    box.fill("社" * 2001)
    page.get_by_test_id("send").click()
    expect(toast).to_be_visible()
    expect(toast).to_contain_text("不能超过2000个字")
    expect(page.get_by_test_id("char-count")).to_have_text("2001/2000")
    expect(box).to_have_attribute("aria-invalid", "true")
    page.screenshot(path=artifacts / "errors-01-too-long.png")
    box.fill("")
    box.press("Enter")
    expect(toast).to_contain_text("请输入内容")
    assert chat_requests == []
    expect(page.get_by_test_id("message-user")).to_have_count(0)

    box.type("第一行")
    box.press("Shift+Enter")
    box.type("第二行")
    expect(box).to_have_value("第一行\n第二行")
    assert chat_requests == []
    page.get_by_test_id("toast-close").click()
    expect(toast).to_be_hidden()

    disabled_in_flight = page.evaluate("""() => {
        document.querySelector('[data-testid=composer]').requestSubmit();
        return document.querySelector('[data-testid=send]').disabled;
    }""")
    assert disabled_in_flight
    expect(page.get_by_test_id("app")).to_have_attribute("data-busy", "false")
    expect(page.get_by_test_id("send")).to_be_enabled()

    say(page, "我要办理社保关系转移")
    say(page, "杭州")
    expect(page.get_by_test_id("fields").locator("li")).to_have_count(4)
    expect(page.get_by_test_id("state-badge")).to_have_text("信息收集中")

    page.get_by_test_id("reset").click()
    page.get_by_test_id("ask-reset").click()  # a business in progress: asked first
    expect(page.get_by_test_id("fields").locator("li")).to_have_count(0)
    expect(page.get_by_test_id("fields-empty")).to_be_visible()
    expect(page.get_by_test_id("state-badge")).to_have_text("空闲")
    expect(page.get_by_test_id("business-name")).to_have_text("暂无")
    expect(page.get_by_test_id("message-user")).to_have_count(0)
    expect(page.get_by_test_id("message-assistant")).to_have_count(1)
    expect(page.get_by_test_id("message-assistant")).to_contain_text("您好")
    page.screenshot(path=artifacts / "errors-02-after-reset.png")

    page.reload()
    page.wait_for_selector("[data-testid=app][data-ready=true]")
    expect(page.get_by_test_id("state-badge")).to_have_text("空闲")


def test_reload_restores_and_token_is_renewed(open_page):
    page = open_page()
    say(page, "我要办理社保关系转移")
    say(page, "杭州")
    page.evaluate("sessionStorage.setItem('si_agent.token', 'expired.or.forged')")
    page.reload()
    page.wait_for_selector("[data-testid=app][data-ready=true]")
    expect(page.get_by_test_id("toast")).to_be_hidden()
    expect(page.get_by_test_id("state-badge")).to_have_text("信息收集中")
    expect_field(page, "from_city", "collected", "杭州市")
    expect(page.get_by_test_id("message-note")).to_contain_text("社保关系转移")
    say(page, "苏州")
    expect_field(page, "to_city", "collected", "苏州市")


def test_network_failure_and_rate_limit(open_page):
    page = open_page()
    toast = page.get_by_test_id("toast")
    box = page.get_by_test_id("message-input")

    page.route("**/api/chat", lambda route: route.abort("internetdisconnected"))
    box.fill("我要办理社保关系转移")
    box.press("Enter")
    expect(toast).to_have_text(re.compile("网络异常，请检查网络后重试。"))
    expect(page.get_by_test_id("message-status")).to_have_text("未发送")
    expect(box).to_have_value("我要办理社保关系转移")
    expect(page.get_by_test_id("send")).to_be_enabled()

    page.unroute("**/api/chat")
    body = json.dumps({"error": {"code": "rate_limited", "message": "您的操作太频繁了，请稍后再试。"}},
                      ensure_ascii=False)
    page.route("**/api/chat", lambda route: route.fulfill(
        status=429, body=body, content_type="application/json; charset=utf-8"))
    box.press("Enter")
    expect(toast).to_have_text(re.compile("您的操作太频繁了"))

    page.unroute("**/api/chat")
    say(page, "我要办理社保关系转移")
    expect(page.get_by_test_id("state-badge")).to_have_text("信息收集中")
