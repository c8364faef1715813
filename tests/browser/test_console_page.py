"""The staff console in Chromium: sign in with a local account, run one hit test, sign out.

The server has the shipped knowledge base (built on first use, as ``serve`` does).
Screenshots go to ``SI_CONSOLE_SHOTS`` (default: the browser artifacts folder).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

try:
    from playwright.sync_api import expect
except ImportError:  # the fixtures skip (or fail under SI_REQUIRE_BROWSER) without it
    expect = None

from si_agent.config.settings import Settings
from si_agent.server import create_app
from tests.browser.conftest import CHROMIUM, CHROMIUM_ARGS, DESKTOP, ROOT, TIMEOUT_MS, serving

pytestmark = pytest.mark.browser

PASSWORD = "correct horse battery"


@pytest.fixture(scope="module")
def console_server(tmp_path_factory) -> Iterator[str]:
    settings = Settings(
        business_dir=ROOT / "businesses",
        kb_dir=ROOT / "rag" / "knowledge",
        data_dir=tmp_path_factory.mktemp("console-browser"),
        session_store="memory",
        audit_store="sqlite",
        rate_limit="1000 per minute",
    )
    app = create_app(settings)
    assert app.config["SI_CONTROLLER"].knowledge.status()["ok"]
    app.config["SI_STAFF_ACCOUNTS"].add("张三", PASSWORD)
    with serving(app) as url:
        yield url


@pytest.fixture
def shots(artifacts) -> Path:
    folder = Path(os.environ.get("SI_CONSOLE_SHOTS") or artifacts)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def test_sign_in_and_hit_test(playwright_driver, console_server, tmp_path, shots):
    context = playwright_driver.chromium.launch_persistent_context(
        str(tmp_path / "profile"),
        executable_path=str(CHROMIUM),
        headless=True,
        args=CHROMIUM_ARGS,
        viewport=DESKTOP,
        locale="zh-CN",
    )
    context.set_default_timeout(TIMEOUT_MS)
    errors: list[str] = []
    try:
        page = context.pages[0] if context.pages else context.new_page()
        page.on("pageerror", lambda err: errors.append(str(err)))
        # CSP violations are console errors; the 401 of the wrong password is not one.
        page.on(
            "console",
            lambda msg: (
                errors.append(msg.text)
                if msg.type == "error" and "Failed to load resource" not in msg.text
                else None
            ),
        )
        page.goto(console_server + "/console/")
        expect(page).to_have_url(console_server + "/console/login")  # not signed in yet
        page.get_by_label("用户名").fill("张三")
        page.get_by_label("密码").fill("wrong password here")
        page.get_by_role("button", name="登录", exact=True).click()
        expect(page.get_by_test_id("login-error")).to_have_text("用户名或密码不正确。")
        page.get_by_label("密码").fill(PASSWORD)
        page.get_by_role("button", name="登录", exact=True).click()
        expect(page.get_by_test_id("staff-name")).to_have_text("张三")
        page.screenshot(path=shots / "console-01-overview.png")

        page.get_by_role("link", name="命中测试").first.click()
        page.get_by_label("问题").fill("失叶金咋领")
        page.get_by_role("button", name="测试").click()
        results = page.get_by_test_id("hit-results")
        expect(results).to_be_visible()
        expect(page.get_by_test_id("normalised")).to_have_text("失业金怎么领")
        expect(page.get_by_test_id("gate")).to_have_attribute("data-gate", "passed")
        expect(page.get_by_test_id("chunks").locator("tbody tr").first).to_contain_text(
            "失业保险金申领指南"
        )
        expect(page.get_by_test_id("reply")).to_contain_text("来源：《失业保险金申领指南》")
        expect(page.get_by_test_id("rule")).to_have_text("question")
        page.get_by_test_id("chunks").locator("details").first.click()  # a chunk's full text
        page.screenshot(path=shots / "console-02-hit-test.png", full_page=True)

        page.get_by_role("button", name="退出登录").click()
        expect(page.get_by_text("您已退出登录。")).to_be_visible()
        page.goto(console_server + "/console/hits")
        expect(page).to_have_url(console_server + "/console/login")
    finally:
        context.close()
    assert not errors, errors  # no CSP violation, no script error
