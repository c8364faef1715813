"""A hand-off to a person in Chromium: the citizen's page and the staff console, both real.

Within office hours, with a staff member at the queue (the console's 人工服务 page open
in a second browser), a citizen in the middle of 社保卡挂失 asks for 人工: the page
says where the ticket stands; staff take it in the console, the citizen's page says
who answers and shows the person's replies as they are sent (no reload); what the
citizen types reaches the ticket (the console shows it without a reload); staff hand
back, and the citizen goes on with the business where it was.

Outside office hours, or within them with nobody at the queue, the page gets the
contact text and a ticket number, and nothing that promises a person.

One server per case, as ``serve`` runs it on one machine (SQLite sessions and tickets).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

try:
    from playwright.sync_api import Page, expect
except ImportError:  # the fixtures skip (or fail under SI_REQUIRE_BROWSER) without it
    Page = expect = None

from si_agent.config.settings import Settings
from si_agent.server import create_app
from tests.browser.conftest import CHROMIUM, CHROMIUM_ARGS, DESKTOP, ROOT, TIMEOUT_MS, serving
from tests.browser.test_chat_page import say

pytestmark = pytest.mark.browser

PASSWORD = "correct horse battery"
STAFF = "gh1024"
ID = "330102199503080133"
NUMBER = re.compile(r"H\d{4}-\d{4}")
# What a page must never say when no person is coming.
PROMISES = ("请稍候", "正在为您转接", "人工客服接入后会在这里回复您", "正在为您服务")


@contextmanager
def running(tmp_path: Path, hours: str, streams: int | None = None) -> Iterator[str]:
    """The app served; ``streams``: its live streams' limit (0: every page polls)."""
    settings = Settings(business_dir=ROOT / "businesses", knowledge="none", data_dir=tmp_path,
                        session_store="sqlite", audit_store="sqlite",
                        rate_limit="1000 per minute", handoff_hours=hours)
    app = create_app(settings)
    app.config["SI_STAFF_ACCOUNTS"].add(STAFF, PASSWORD)
    if streams is not None:
        app.config["SI_STREAMS"].limit = streams
    with serving(app) as url:
        yield url


@pytest.fixture
def browser_page(playwright_driver, tmp_path) -> Iterator[Callable[[str], Page]]:
    """``browser_page(name)``: a page in a fresh Chromium profile of its own (its own
    cookies and localStorage: the citizen and the staff member are two browsers).
    Uncaught errors in any page fail the test."""
    contexts = []
    errors: list[str] = []

    def open_browser(name: str) -> Page:
        context = playwright_driver.chromium.launch_persistent_context(
            str(tmp_path / f"profile-{name}"), executable_path=str(CHROMIUM), headless=True,
            args=CHROMIUM_ARGS, viewport=DESKTOP, locale="zh-CN")
        contexts.append(context)
        context.set_default_timeout(TIMEOUT_MS)
        page = context.pages[0] if context.pages else context.new_page()
        page.on("pageerror", lambda err: errors.append(f"{name}: {err}"))
        return page

    yield open_browser
    for context in contexts:
        context.close()
    assert not errors, f"uncaught errors in the pages: {errors}"


def citizen_page(page: Page, url: str) -> Page:
    page.goto(url + "/")
    page.wait_for_selector("[data-testid=app][data-ready=true]")
    return page


def staff_at_queue(page: Page, url: str) -> Page:
    """Sign in to the console and open the queue (which puts the staff member at it)."""
    page.goto(url + "/console/login")
    page.get_by_label("用户名").fill(STAFF)
    page.get_by_label("密码").fill(PASSWORD)
    page.get_by_role("button", name="登录", exact=True).click()
    page.get_by_role("link", name="人工服务").first.click()
    expect(page.get_by_test_id("handoff-queue")).to_contain_text(f"在线：{STAFF}")
    return page


def say_to_person(page: Page, text: str) -> None:
    """Send ``text`` while a person answers: the turn has no reply of the assistant's."""
    assistant = page.get_by_test_id("message-assistant")
    users = page.get_by_test_id("message-user")
    before, sent = assistant.count(), users.count()
    page.get_by_test_id("message-input").fill(text)
    page.get_by_test_id("message-input").press("Enter")
    expect(users).to_have_count(sent + 1)
    expect(page.get_by_test_id("app")).to_have_attribute("data-busy", "false")
    expect(assistant).to_have_count(before)  # the empty reply bubble went again


def test_a_person_answers_live_and_hands_back(browser_page, tmp_path, artifacts):
    with running(tmp_path / "data", "always") as url:
        staff = staff_at_queue(browser_page("staff"), url)
        citizen = citizen_page(browser_page("citizen"), url)
        citizen.evaluate("window.__notReloaded = true")

        say(citizen, f"社保卡丢了，身份证{ID}，刘洋")
        reply = say(citizen, "转人工")
        number = NUMBER.search(reply).group(0)
        assert "已为您转人工服务" in reply and "第1位" in reply, reply
        assert "人工客服接入后会在这里回复您" in reply, reply
        status = citizen.get_by_test_id("handoff-status")
        expect(status).to_be_visible()
        expect(status).to_have_attribute("data-state", "waiting")
        expect(status).to_have_text(f"人工服务排队中（工单号{number}），回复“结束人工”可退出排队。")

        # staff: the ticket in the queue (a fresh load: the page refreshes itself too)
        staff.goto(url + "/console/handoff")
        row = staff.locator(f"tr[data-number='{number}']")
        expect(row).to_have_attribute("data-state", "waiting")
        expect(row).to_contain_text("要求人工")
        expect(row).to_contain_text("社保卡挂失")
        row.get_by_test_id("take").click()
        expect(staff.get_by_test_id("ticket-number")).to_have_text(number)
        expect(staff.get_by_test_id("ticket-state")).to_contain_text(f"处理中（{STAFF}）")
        context = staff.get_by_test_id("ticket-context")
        expect(context).to_contain_text("3301**********0133")
        expect(context).not_to_contain_text(ID)

        # the citizen's page, live: who answers, and their greeting
        expect(status).to_have_attribute("data-state", "held")
        expect(status).to_have_text(f"人工客服（工号{STAFF}）正在为您服务，回复“结束人工”可结束。")
        expect(citizen.get_by_test_id("message-assistant").last).to_contain_text(
            f"人工客服已接入（工号{STAFF}），请问有什么可以帮您？")

        # what the citizen types reaches the ticket (the console shows it without a reload)
        staff.evaluate("window.__notReloaded = true")
        say_to_person(citizen, "卡丢在公交上了，能先冻结吗")
        from_citizen = staff.locator("#ticket-messages li[data-sender=citizen]")
        expect(from_citizen).to_have_count(1)
        expect(from_citizen).to_contain_text("卡丢在公交上了，能先冻结吗")
        assert staff.evaluate("window.__notReloaded === true")

        # the person's reply appears on the citizen's page as it is sent
        staff.get_by_test_id("reply-text").fill("您好，可以先临时挂失，冻结后找回还能解挂。")
        staff.get_by_test_id("send-reply").click()
        expect(staff.locator("#ticket-messages li[data-sender=staff]")).to_contain_text(
            "您好，可以先临时挂失")
        from_person = citizen.get_by_test_id("message-staff")
        expect(from_person).to_have_count(1)
        expect(from_person.get_by_test_id("message-text")).to_have_text(
            "您好，可以先临时挂失，冻结后找回还能解挂。")
        assert citizen.evaluate("window.__notReloaded === true")  # all of it live
        citizen.screenshot(path=artifacts / "handoff-01-citizen-held.png")
        staff.screenshot(path=artifacts / "handoff-02-console-ticket.png", full_page=True)

        # a page loaded again shows the hand-off as it stands, each message once
        citizen.reload()
        citizen.wait_for_selector("[data-testid=app][data-ready=true]")
        status = citizen.get_by_test_id("handoff-status")
        expect(status).to_have_attribute("data-state", "held")
        expect(citizen.get_by_test_id("message-staff")).to_have_count(1)
        expect(citizen.get_by_test_id("message-user").filter(has_text="卡丢在公交上了")
               ).to_have_count(1)
        citizen.evaluate("window.__notReloaded = true")

        # staff hand back: the citizen's page says so, the status line goes
        staff.get_by_test_id("hand-back").click()
        expect(staff.get_by_test_id("handoff-queue")).to_be_visible()
        expect(staff.locator(f"tr[data-number='{number}']")).to_have_count(0)
        expect(citizen.get_by_test_id("message-assistant").last).to_contain_text(
            "人工客服已将对话交还智能助手，您可以接着和我对话。")
        expect(status).to_be_hidden()
        assert citizen.evaluate("window.__notReloaded === true")

        # the assistant again, where the business was: the phone, then the loss type
        reply = say(citizen, "13800138000")
        assert "挂失方式" in reply, reply
        expect(status).to_be_hidden()
        citizen.screenshot(path=artifacts / "handoff-03-citizen-back.png")


@pytest.mark.parametrize(("hours", "staff_present", "told"), [
    ("never", True, "现在不是人工服务时间"),
    ("always", False, "目前没有人工客服在线"),
], ids=["outside-hours-staff-signed-in", "within-hours-nobody-at-the-queue"])
def test_no_person_is_promised_when_none_is_coming(browser_page, tmp_path, artifacts, hours,
                                                   staff_present, told):
    with running(tmp_path / "data", hours) as url:
        if staff_present:
            staff_at_queue(browser_page("staff"), url)
        citizen = citizen_page(browser_page("citizen"), url)
        reply = say(citizen, "我要转人工")
        assert told in reply, reply
        assert "12333社保服务热线" in reply and "并告知工单号" in reply, reply
        found = NUMBER.search(reply)
        assert found, reply
        citizen.wait_for_timeout(1000)  # whatever the ticket's stream would add
        shown = citizen.get_by_test_id("app").inner_text()
        assert found.group(0) in shown
        for promise in PROMISES:
            assert promise not in shown, (promise, shown)
        citizen.screenshot(path=artifacts / f"handoff-04-no-person-{hours}.png")


def test_a_refused_message_while_polling_keeps_the_page_on_the_ticket(browser_page, tmp_path):
    """Every live stream taken (the page is served polls), a message the moderation refuses
    while a person answers: the citizen gets the care reply, the person a note; the page
    still shows the status line and the person's next reply, without a reload."""
    with running(tmp_path / "data", "always", streams=0) as url:
        staff = staff_at_queue(browser_page("staff"), url)
        citizen = citizen_page(browser_page("citizen"), url)
        citizen.evaluate("window.__notReloaded = true")
        asked: list[str] = []
        citizen.on("request", lambda r: asked.append(r.url) if "/handoff/events" in r.url
                   else None)
        number = NUMBER.search(say(citizen, "转人工")).group(0)
        staff.goto(url + "/console/handoff")
        staff.locator(f"tr[data-number='{number}']").get_by_test_id("take").click()
        status = citizen.get_by_test_id("handoff-status")
        expect(status).to_have_attribute("data-state", "held", timeout=TIMEOUT_MS)  # a poll
        before = len(asked)
        citizen.wait_for_timeout(4000)
        assert len(asked) - before <= 1, asked  # it waits as `again` says between polls

        reply = say(citizen, "我活不下去了，想自杀")
        assert "12356" in reply and "110" in reply, reply
        note = staff.locator("#ticket-messages li[data-sender=system]").last
        expect(note).to_contain_text("〔市民消息未通过内容检查：自伤倾向〕")
        expect(note).to_contain_text("我活不下去了")
        expect(status).to_be_visible()
        expect(status).to_have_attribute("data-state", "held")

        staff.get_by_test_id("reply-text").fill("我在这里，您愿意和我说说发生了什么吗？")
        staff.get_by_test_id("send-reply").click()
        expect(citizen.get_by_test_id("message-staff").get_by_test_id("message-text")
               ).to_have_text("我在这里，您愿意和我说说发生了什么吗？", timeout=TIMEOUT_MS)
        expect(citizen.get_by_test_id("message-assistant").filter(
            has_text="未通过内容检查")).to_have_count(0)  # the note is for staff only
        assert citizen.evaluate("window.__notReloaded === true")
