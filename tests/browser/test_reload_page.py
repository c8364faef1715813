"""The page survives a reload and a shared computer, in Chromium.

A reload shows the conversation again from the server (masked as it was shown, and
nothing of it in the browser's storage); a submission still running at reload is
followed again; 结束办理 clears the session and the identity the page kept; 重新开始
asks before it wipes a business; a page opened after a long pause asks before it
resumes. ``social_transfer`` runs on a long-running executor the test releases.
"""

from __future__ import annotations

import time
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
    from playwright.sync_api import Page, expect
except ImportError:  # the fixtures skip (or fail under SI_REQUIRE_BROWSER) without it
    Page = expect = None

pytestmark = pytest.mark.browser
PHONE = {"width": 390, "height": 844}
NUMBER = "SI20261202777777"
ID = "330122196303150178"
CARD = "6222021234567890123"
TRANSFER = ("我要转社保", "从杭州转到苏州", ID, "张伟")


@pytest.fixture(scope="module")
def portal() -> Iterator[SlowPortal]:
    portal = SlowPortal("page_portal", NUMBER, "正在网上办事大厅填写表单…")
    yield portal
    portal.release.set()


@pytest.fixture(scope="module")
def controller(tmp_path_factory, portal) -> Iterator[Controller]:
    catalog = load_businesses(ROOT / "businesses")
    catalog["social_transfer"] = catalog["social_transfer"].model_copy(update={"api": Api(
        kind="page_portal", result_template="已在网上办事大厅提交，受理编号：{application_no}。")})
    settings = _settings(tmp_path_factory)
    executors = Executors(settings, executors={"page_portal": portal})
    yield Controller(catalog, MemoryStore(), RuleEngine(catalog), executors)
    executors.close()


def _settings(tmp_path_factory) -> Settings:
    return Settings(business_dir=ROOT / "businesses", knowledge="none",
                    data_dir=tmp_path_factory.mktemp("reload-page"), session_store="memory",
                    rate_limit="1000 per minute")


@pytest.fixture(scope="module")
def live_server(tmp_path_factory, controller) -> Iterator[str]:
    with serving(create_app(_settings(tmp_path_factory), controller=controller)) as url:
        yield url


def say(page: Page, text: str) -> None:
    replies = page.get_by_test_id("message-assistant")
    before = replies.count()
    page.get_by_test_id("message-input").fill(text)
    page.get_by_test_id("message-input").press("Enter")
    expect(replies).to_have_count(before + 1)
    expect(page.get_by_test_id("app")).to_have_attribute("data-busy", "false")


def bubbles(page: Page) -> list[tuple[str, str]]:
    rows = page.locator("[data-testid=message-user], [data-testid=message-assistant]")
    return [(row.get_attribute("data-testid"), row.get_by_test_id("message-text").inner_text())
            for row in rows.all()]


def reload(page: Page) -> None:
    page.reload()
    page.wait_for_selector("[data-testid=app][data-ready=true]")


def user_id(page: Page) -> str | None:
    return page.evaluate("localStorage.getItem('si_agent.user_id')")


def browser_storage(page: Page) -> str:
    return page.evaluate("JSON.stringify([localStorage, sessionStorage])")


def test_a_reload_shows_the_conversation_again_masked(open_page, artifacts):
    page = open_page()
    for text in TRANSFER[:2]:
        say(page, text)
    say(page, f"身份证{ID}，卡号{CARD}")
    # Shown as the server keeps it: the bank card too, not only what the page masks.
    shown = page.get_by_test_id("message-user").last.get_by_test_id("message-text")
    expect(shown).to_have_text("身份证3301**********0178，卡号6222****0123")
    before = bubbles(page)
    assert len(before) == 7  # the greeting, then three messages and their replies

    reload(page)
    expect(page.get_by_test_id("message-assistant")).to_have_count(4)
    assert bubbles(page) == before
    expect(page.locator("[data-restored=true]")).to_have_count(6)
    expect(page.get_by_test_id("state-badge")).to_have_text("信息收集中")
    expect(page.get_by_test_id("field-id_number")).to_have_attribute("data-status", "collected")
    expect(page.get_by_test_id("message-note")).to_contain_text("社保关系转移")
    content = page.content()
    assert ID not in content and CARD not in content
    assert "杭州" not in browser_storage(page)  # from the server, not the browser's storage
    page.screenshot(path=artifacts / "reload-desktop.png")

    page.set_viewport_size(PHONE)
    reload(page)
    assert bubbles(page) == before
    expect(page.get_by_test_id("end-session")).to_be_visible()
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    page.screenshot(path=artifacts / "reload-phone.png")

    say(page, "张伟")  # the dialogue goes on where it was
    expect(page.get_by_test_id("state-badge")).to_have_text("待确认")


def test_a_running_submission_is_followed_again_after_reload(open_page, portal, artifacts):
    portal.release.clear()
    page = open_page()
    for text in (*TRANSFER, "确认"):
        say(page, text)
    replies = page.get_by_test_id("message-assistant")
    expect(replies.last).to_contain_text("申请已提交，正在办理")

    reload(page)
    expect(replies.last).to_contain_text("申请已提交，正在办理")
    note = page.get_by_test_id("job-progress")
    expect(note).to_have_text("正在网上办事大厅填写表单…")
    expect(page.get_by_test_id("state-badge")).to_have_text("提交中")
    # While it is submitted 重新开始 is refused: the note after the reload does not offer it.
    expect(page.get_by_text("正在提交，结果出来后会显示在这里")).to_be_visible()
    expect(page.get_by_text("或点击“重新开始”")).to_have_count(0)
    page.screenshot(path=artifacts / "reload-job-running.png")
    portal.release.set()
    expect(replies.last).to_contain_text(f"受理编号：{NUMBER}")
    expect(note).to_have_count(0)
    expect(page.get_by_test_id("state-badge")).to_have_text("已完成")

    reload(page)  # the outcome is part of the conversation now, and told once
    expect(replies.last).to_contain_text(f"受理编号：{NUMBER}")
    expect(replies.filter(has_text=NUMBER)).to_have_count(1)
    expect(page.get_by_test_id("job-progress")).to_have_count(0)


def test_an_outcome_that_came_while_the_page_was_closed_is_shown_once(
        open_page, portal, controller, live_server):
    portal.release.clear()
    page = open_page()
    for text in (*TRANSFER, "确认"):
        say(page, text)
    uid = user_id(page)
    page.goto("about:blank")  # the citizen closes the page while it runs
    portal.release.set()
    deadline = time.monotonic() + 10
    while controller.store.load(uid).state != "done":
        assert time.monotonic() < deadline, "the submission did not finish"
        time.sleep(0.05)

    page.goto(live_server + "/")
    page.wait_for_selector("[data-testid=app][data-ready=true]")
    replies = page.get_by_test_id("message-assistant")
    expect(replies.last).to_contain_text(f"受理编号：{NUMBER}")
    expect(replies.filter(has_text=NUMBER)).to_have_count(1)
    expect(page.get_by_test_id("state-badge")).to_have_text("已完成")
    expect(page.get_by_test_id("job-progress")).to_have_count(0)
    reload(page)
    expect(replies.filter(has_text=NUMBER)).to_have_count(1)


def test_end_session_clears_the_conversation_and_the_identity(open_page, controller, artifacts):
    page = open_page(PHONE)
    for text in TRANSFER[:3]:
        say(page, text)
    first = user_id(page)
    assert first and controller.store.load(first) is not None

    page.get_by_test_id("end-session").click()
    ask = page.get_by_test_id("ask")
    expect(ask).to_contain_text("结束办理将清除本次对话")
    expect(page.get_by_test_id("ask-keep")).to_be_focused()
    page.screenshot(path=artifacts / "end-session-ask-phone.png")
    page.get_by_test_id("ask-keep").click()  # changed their mind: nothing is lost
    expect(ask).to_have_count(0)
    expect(page.get_by_test_id("message-user")).to_have_count(3)
    assert user_id(page) == first

    page.get_by_test_id("end-session").click()
    page.get_by_test_id("ask-end").click()
    expect(page.get_by_test_id("message-user")).to_have_count(0)
    expect(page.get_by_test_id("message-assistant")).to_have_count(1)  # the greeting
    expect(page.get_by_test_id("message-note")).to_have_text("本次办理已结束，对话和身份信息已清除。")
    expect(page.get_by_test_id("state-badge")).to_have_text("空闲")
    assert user_id(page) is None
    assert page.evaluate("sessionStorage.getItem('si_agent.token')") is None
    assert controller.store.load(first) is None
    page.screenshot(path=artifacts / "end-session-done-phone.png")

    reload(page)  # the next person: a new citizen with nothing of the last one
    expect(page.get_by_test_id("message-user")).to_have_count(0)
    expect(page.get_by_test_id("state-badge")).to_have_text("空闲")
    say(page, "你好")
    assert user_id(page) not in (None, first)


def test_reset_asks_before_it_wipes_a_business(open_page):
    page = open_page()
    page.get_by_test_id("reset").click()  # nothing in progress: no question
    expect(page.get_by_test_id("ask")).to_have_count(0)
    expect(page.get_by_test_id("app")).to_have_attribute("data-busy", "false")

    for text in TRANSFER[:2]:
        say(page, text)
    page.get_by_test_id("reset").click()
    expect(page.get_by_test_id("ask-text")).to_have_text(
        "重新开始将清除正在办理的【社保关系转移】和已填写的信息。确定重新开始吗？")
    page.keyboard.press("Escape")
    expect(page.get_by_test_id("ask")).to_have_count(0)
    expect(page.get_by_test_id("state-badge")).to_have_text("信息收集中")

    page.get_by_test_id("reset").click()
    page.get_by_test_id("ask-reset").click()
    expect(page.get_by_test_id("state-badge")).to_have_text("空闲")
    expect(page.get_by_test_id("message-user")).to_have_count(0)


def _pause(controller: Controller, uid: str, seconds: float) -> None:
    """The session's messages as if shown ``seconds`` earlier."""
    session = controller.store.load(uid)
    session.transcript = [m.model_copy(update={"at": m.at - seconds}) for m in session.transcript]
    controller.store.save(session)


def test_after_a_long_pause_the_page_asks_before_resuming(open_page, controller, artifacts):
    page = open_page(PHONE)
    for text in TRANSFER[:2]:
        say(page, text)
    before = bubbles(page)
    uid = user_id(page)

    reload(page)  # a short pause: straight back to the conversation
    expect(page.get_by_test_id("ask")).to_have_count(0)
    assert bubbles(page) == before

    _pause(controller, uid, 31 * 60)
    reload(page)
    expect(page.get_by_test_id("ask-text")).to_have_text("继续上次的办理？【社保关系转移】")
    # Nothing of the last conversation before the choice, and no typing past it.
    expect(page.get_by_test_id("message-user")).to_have_count(0)
    expect(page.get_by_test_id("state-badge")).to_have_text("空闲")
    expect(page.get_by_test_id("message-input")).to_be_disabled()
    expect(page.get_by_test_id("end-session")).to_be_disabled()
    page.screenshot(path=artifacts / "resume-ask-phone.png")
    page.get_by_test_id("ask-resume").click()
    assert bubbles(page) == before
    expect(page.get_by_test_id("state-badge")).to_have_text("信息收集中")
    expect(page.get_by_test_id("message-input")).to_be_enabled()

    _pause(controller, uid, 31 * 60)
    reload(page)
    page.get_by_test_id("ask-startOver").click()
    expect(page.get_by_test_id("state-badge")).to_have_text("空闲")
    expect(page.get_by_test_id("message-user")).to_have_count(0)
    reload(page)
    expect(page.get_by_test_id("ask")).to_have_count(0)
    expect(page.get_by_test_id("message-user")).to_have_count(0)
