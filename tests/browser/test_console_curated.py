"""Curated answers in Chromium: staff add one in the console, a citizen asking on the
citizen page gets it (with its source and date), and the console counts the hit.

One server, as ``serve`` runs it on one machine: SQLite sessions, so the curated
answers are in ``curated.db`` of its data directory; no knowledge base (the curated
answer is the only answer there is).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

try:
    from playwright.sync_api import expect
except ImportError:  # the fixtures skip (or fail under SI_REQUIRE_BROWSER) without it
    expect = None

from si_agent.config.settings import Settings
from si_agent.server import create_app
from tests.browser.conftest import CHROMIUM, CHROMIUM_ARGS, DESKTOP, ROOT, TIMEOUT_MS, serving
from tests.browser.test_chat_page import say

pytestmark = pytest.mark.browser

PASSWORD = "correct horse battery"


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[str]:
    settings = Settings(
        business_dir=ROOT / "businesses",
        knowledge="none",
        data_dir=tmp_path_factory.mktemp("curated-browser"),
        session_store="sqlite",
        audit_store="sqlite",
        rate_limit="1000 per minute",
    )
    app = create_app(settings)
    app.config["SI_STAFF_ACCOUNTS"].add("张三", PASSWORD)
    with serving(app) as url:
        yield url


def test_staff_add_a_curated_answer_and_the_citizen_gets_it(playwright_driver, server, tmp_path,
                                                            artifacts):
    context = playwright_driver.chromium.launch_persistent_context(
        str(tmp_path / "profile"), executable_path=str(CHROMIUM), headless=True,
        args=CHROMIUM_ARGS, viewport=DESKTOP, locale="zh-CN")
    context.set_default_timeout(TIMEOUT_MS)
    errors: list[str] = []
    try:
        page = context.pages[0] if context.pages else context.new_page()
        page.on("pageerror", lambda err: errors.append(str(err)))
        page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
        page.goto(server + "/console/login")
        page.get_by_label("用户名").fill("张三")
        page.get_by_label("密码").fill(PASSWORD)
        page.get_by_role("button", name="登录", exact=True).click()
        page.get_by_role("link", name="常用答案").first.click()
        expect(page.get_by_test_id("no-curated")).to_be_visible()
        page.get_by_test_id("curated-add").click()
        page.get_by_label("问题", exact=True).fill("失业金怎么领")
        page.get_by_label("相似问法（每行一个，可不填）").fill("失业金咋领\n怎么申请失业金")
        page.get_by_label("答案").fill("请带身份证到就近的社保经办窗口，或在网上办事大厅申请失业保险金。")
        page.get_by_label("来源").fill("市人社局常见问题")
        page.get_by_label("日期").fill("2025-06-01")
        page.get_by_role("button", name="保存").click()
        expect(page.get_by_test_id("curated-done")).to_have_text("已添加常用答案。")
        row = page.get_by_test_id("curated-list").locator("tbody tr")
        expect(row).to_have_count(1)
        expect(row.get_by_test_id("hits")).to_have_text("0")
        page.screenshot(path=artifacts / "console-curated-01-list.png", full_page=True)

        citizen = context.new_page()
        citizen.on("pageerror", lambda err: errors.append(str(err)))
        citizen.goto(server + "/")
        citizen.wait_for_selector("[data-testid=app][data-ready=true]")
        reply = say(citizen, "请问，失业金咋领？")
        assert "网上办事大厅申请失业保险金" in reply, reply
        assert "来源：《市人社局常见问题》（2025年6月1日）" in reply, reply
        citizen.screenshot(path=artifacts / "console-curated-02-citizen.png")

        page.reload()
        expect(page.get_by_test_id("curated-list").locator("tbody tr").get_by_test_id("hits")
               ).to_have_text("1")
    finally:
        context.close()
    assert not errors, errors
