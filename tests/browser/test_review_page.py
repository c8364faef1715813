"""Feedback and the conversation review in Chromium: a citizen gives 👎 with a reason
(by keyboard), a staff member finds it in the review, opens the conversation, marks the
turn wrong and exports the conversation as a replay transcript, which replays green."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

try:
    from playwright.sync_api import expect
except ImportError:  # the fixtures skip (or fail under SI_REQUIRE_BROWSER) without it
    expect = None

from si_agent.cli import demo_backend_hook
from si_agent.config.loader import load_businesses
from si_agent.config.settings import Settings
from si_agent.engine.rules import RuleEngine
from si_agent.executor import Executors
from si_agent.flow.controller import Controller
from si_agent.replay import load_dialogues, replay
from si_agent.server import create_app
from si_agent.session import MemoryStore
from tests.browser.conftest import CHROMIUM, CHROMIUM_ARGS, DESKTOP, ROOT, TIMEOUT_MS, serving

pytestmark = pytest.mark.browser

PASSWORD = "correct horse battery"
REASON = "我问的是挂失后多久能补卡"


@pytest.fixture(scope="module")
def review_server(tmp_path_factory) -> Iterator[str]:
    settings = Settings(business_dir=ROOT / "businesses", knowledge="none",
                        data_dir=tmp_path_factory.mktemp("review-browser"),
                        session_store="sqlite", audit_store="sqlite", turn_store="sqlite",
                        rate_limit="1000 per minute")
    app = create_app(settings)
    app.config["SI_STAFF_ACCOUNTS"].add("张三", PASSWORD)
    with serving(app) as url:
        yield url


def launch(playwright_driver, profile: Path, errors: list[str]):
    context = playwright_driver.chromium.launch_persistent_context(
        str(profile), executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS,
        viewport=DESKTOP, locale="zh-CN", accept_downloads=True)
    context.set_default_timeout(TIMEOUT_MS)
    page = context.pages[0] if context.pages else context.new_page()
    page.on("pageerror", lambda err: errors.append(str(err)))
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error"
            and "Failed to load resource" not in msg.text else None)
    return context, page


def test_citizen_rates_a_reply_and_staff_reviews_and_exports_it(
        playwright_driver, review_server, tmp_path, artifacts):
    errors: list[str] = []
    context, page = launch(playwright_driver, tmp_path / "citizen", errors)
    try:
        page.goto(review_server + "/")
        page.wait_for_selector("[data-testid=app][data-ready=true]")
        box = page.get_by_test_id("message-input")
        for n, text in enumerate(("我的社保卡丢了", "张伟"), start=1):
            box.fill(text)
            box.press("Enter")
            expect(page.get_by_test_id("feedback")).to_have_count(n)  # under each reply
        last = page.get_by_test_id("message-assistant").last
        down = last.get_by_role("button", name="没帮助")
        expect(last.get_by_role("group", name="这条回答对您有帮助吗？")).to_be_visible()
        down.focus()
        page.keyboard.press("Enter")  # the keyboard opens the reason, focused
        reason = last.get_by_label("哪里没帮到您？（可选，最多200字）")
        expect(reason).to_be_focused()
        page.keyboard.type(REASON)
        page.keyboard.press("Enter")
        expect(last.get_by_test_id("feedback-status")).to_have_text("感谢您的反馈，我们会改进。")
        expect(down).to_have_attribute("aria-pressed", "true")
        page.screenshot(path=artifacts / "review-01-feedback.png")
    finally:
        context.close()

    context, page = launch(playwright_driver, tmp_path / "staff", errors)
    try:
        page.goto(review_server + "/console/login")
        page.get_by_label("用户名").fill("张三")
        page.get_by_label("密码").fill(PASSWORD)
        page.get_by_role("button", name="登录", exact=True).click()
        page.get_by_role("link", name="对话审核").first.click()
        page.get_by_label("市民评价").select_option("down")
        page.get_by_role("button", name="筛选").click()
        rows = page.get_by_test_id("conversations").locator("tbody tr")
        expect(rows).to_have_count(1)
        rows.first.get_by_role("link", name="查看").click()
        turn = page.locator("[data-testid=turn][data-turn='2']")
        expect(turn.get_by_test_id("turn-feedback")).to_have_text(f"没帮助：{REASON}")
        expect(turn.get_by_test_id("turn-input")).to_have_text("〔身份证号〕")  # refused, masked
        turn.get_by_text("标记这一轮有误").click()
        turn.get_by_label("哪里不对").fill("市民问的是补卡时间")
        turn.get_by_role("button", name="标记为错误").click()
        expect(page.locator("[data-testid=turn][data-turn='2']").get_by_test_id(
            "turn-review")).to_contain_text("市民问的是补卡时间")
        page.screenshot(path=artifacts / "review-02-conversation.png", full_page=True)
        with page.expect_download() as download:
            page.get_by_test_id("export").click()
        saved = tmp_path / download.value.suggested_filename
        download.value.save_as(saved)
    finally:
        context.close()
    assert not errors, errors

    text = saved.read_text("utf-8")
    assert saved.suffix == ".yaml" and "# 审核标记为错误（张三）：市民问的是补卡时间" in text
    settings = Settings(business_dir=ROOT / "businesses", data_dir=tmp_path / "replay")
    catalog = load_businesses(settings.business_dir)
    controller = Controller(catalog, MemoryStore(), RuleEngine(catalog), Executors(settings))
    [(source, transcript)] = load_dialogues([saved])
    report = replay(controller, transcript, source=source, backend=demo_backend_hook(settings))
    assert report.passed and report.turns == 2, report.failures  # the marked turn: no expect
