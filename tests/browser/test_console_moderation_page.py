"""The console's sensitive-word screen in Chromium: a check that finds an error at its
line, a save, the citizen refused by the new word, and the version restored.

Screenshots go to ``SI_CONSOLE_SHOTS`` (default: the browser artifacts folder).
"""

from __future__ import annotations

import os
import shutil
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
CATEGORY = "  - id: test_refuse\n    label: 测试拒绝\n    action: refuse\n    words: [蓝莓果酱暗号]\n"


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[tuple[str, Path]]:
    root = tmp_path_factory.mktemp("console-moderation")
    folder = root / "businesses"
    shutil.copytree(ROOT / "businesses", folder)
    (folder / "_moderation.yaml").unlink(missing_ok=True)
    settings = Settings(business_dir=folder, data_dir=root / "data", session_store="memory",
                        audit_store="sqlite", rate_limit="1000 per minute", knowledge="none")
    app = create_app(settings)
    app.config["SI_STAFF_ACCOUNTS"].add("张三", PASSWORD)
    with serving(app) as url:
        yield url, folder


def citizen_says(page, url: str, text: str) -> dict:
    auth = page.request.post(url + "/api/token", data={"user_id": "citizen-1"}).json()
    return page.request.post(url + "/api/chat", data={"message": text}, headers={
        "Authorization": f"Bearer {auth['access_token']}"}).json()


def test_edit_check_save_and_restore(playwright_driver, server, tmp_path, artifacts):
    url, folder = server
    shots = Path(os.environ.get("SI_CONSOLE_SHOTS") or artifacts)
    shots.mkdir(parents=True, exist_ok=True)
    context = playwright_driver.chromium.launch_persistent_context(
        str(tmp_path / "profile"), executable_path=str(CHROMIUM), headless=True,
        args=CHROMIUM_ARGS, viewport=DESKTOP, locale="zh-CN")
    context.set_default_timeout(TIMEOUT_MS)
    errors: list[str] = []
    try:
        page = context.pages[0] if context.pages else context.new_page()
        page.on("pageerror", lambda err: errors.append(str(err)))
        # CSP violations are console errors; the 400 of the page with errors is not one.
        page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error"
                and "Failed to load resource" not in msg.text else None)
        page.goto(url + "/console/login")
        page.get_by_label("用户名").fill("张三")
        page.get_by_label("密码").fill(PASSWORD)
        page.get_by_role("button", name="登录", exact=True).click()
        page.get_by_role("link", name="敏感词").click()
        expect(page.get_by_test_id("moderation-categories")).to_contain_text("辱骂")
        editor = page.get_by_label("词表内容（YAML）")
        original = editor.input_value()
        assert original.startswith("# 内容审核词表")

        # A word listed twice (Traditional and Simplified): the check names its line.
        doubled = CATEGORY.replace("[蓝莓果酱暗号]", "[蓝莓果酱暗号, 藍莓果醬暗號]")
        editor.fill(original.replace("allow:\n", doubled + "allow:\n"))
        page.get_by_role("button", name="检查").click()
        line = original.replace("allow:\n", doubled + "allow:\n").splitlines().index(
            "    words: [蓝莓果酱暗号, 藍莓果醬暗號]") + 1
        expect(page.get_by_test_id("moderation-errors")).to_contain_text(
            f"_moderation.yaml:{line}")
        page.screenshot(path=shots / "console-moderation-01-error.png", full_page=True)
        assert not (folder / "_moderation.yaml").exists()

        editor = page.get_by_label("词表内容（YAML）")
        editor.fill(original.replace("allow:\n", CATEGORY + "allow:\n"))
        page.get_by_test_id("moderation-save").click()
        expect(page.get_by_test_id("moderation-notice")).to_contain_text("已保存为版本")
        expect(page.get_by_test_id("moderation-categories")).to_contain_text("测试拒绝")
        page.screenshot(path=shots / "console-moderation-02-saved.png", full_page=True)
        turn = citizen_says(page, url, "我要转社保 蓝莓果酱暗号")
        assert turn["state"] == "idle", turn

        versions = page.get_by_test_id("moderation-versions")
        expect(versions.locator("tbody tr")).to_have_count(2)
        versions.locator("tbody tr").last.get_by_role("link").click()
        page.get_by_test_id("moderation-restore").click()
        expect(page.get_by_test_id("moderation-notice")).to_contain_text("已保存为版本")
        expect(page.get_by_test_id("moderation-categories")).not_to_contain_text("测试拒绝")
        assert citizen_says(page, url, "我要转社保 蓝莓果酱暗号")["state"] == "collecting"
        assert errors == []
    finally:
        context.close()
