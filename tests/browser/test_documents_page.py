"""Knowledge documents in Chromium: upload a PDF, see its chunks, publish, ask as a citizen.

Staff sign in, upload a PDF made in the test (reportlab, a Chinese CID font) with its
metadata, check the converted text and chunks, publish; the citizen page's answer cites
it. Then a Word file made in the test replaces it as version 2 (a draft first: citizens
still get version 1), is published, and the answer cites the new title. The server has
the shipped knowledge base and its own data directory.
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
from tests.browser.test_console_page import PASSWORD, shots  # noqa: F401  (a fixture)
from tests.console.test_documents import QUESTION
from tests.documents import govdocs

pytestmark = pytest.mark.browser

REVISED = "关于调整2026年度失业保险金发放标准的通知（修订版）"


@pytest.fixture(scope="module")
def documents_server(tmp_path_factory) -> Iterator[str]:
    settings = Settings(
        business_dir=ROOT / "businesses",
        kb_dir=ROOT / "rag" / "knowledge",
        data_dir=tmp_path_factory.mktemp("documents-browser"),
        session_store="memory",
        audit_store="sqlite",
        rate_limit="1000 per minute",
    )
    app = create_app(settings)
    assert app.config["SI_CONTROLLER"].knowledge.status()["ok"]
    app.config["SI_STAFF_ACCOUNTS"].add("张三", PASSWORD)
    with serving(app) as url:
        yield url


def test_upload_preview_publish_and_the_citizen_answer_cites_it(
    playwright_driver, documents_server, tmp_path, shots  # noqa: F811
):
    pdf = tmp_path / "失业保险金标准通知.pdf"
    pdf.write_bytes(govdocs.pdf())
    docx = tmp_path / "失业保险金标准通知（修订）.docx"
    docx.write_bytes(govdocs.docx())
    context = playwright_driver.chromium.launch_persistent_context(
        str(tmp_path / "profile"), executable_path=str(CHROMIUM), headless=True,
        args=CHROMIUM_ARGS, viewport=DESKTOP, locale="zh-CN",
    )
    context.set_default_timeout(TIMEOUT_MS)
    errors: list[str] = []
    try:
        page = context.pages[0] if context.pages else context.new_page()
        page.on("pageerror", lambda err: errors.append(str(err)))
        page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
        page.goto(documents_server + "/console/login")
        page.get_by_label("用户名").fill("张三")
        page.get_by_label("密码").fill(PASSWORD)
        page.get_by_role("button", name="登录", exact=True).click()
        page.get_by_role("link", name="知识文档").click()
        expect(page.get_by_test_id("no-documents")).to_be_visible()

        # Upload the PDF; the title comes from the file.
        page.locator("#file").set_input_files(str(pdf))
        page.locator("#source").fill("成都市人力资源和社会保障局 蓉人社发〔2026〕18号")
        page.locator("#as_of").fill("2026-01")
        page.get_by_label("失业保险金申领").check()
        page.get_by_role("button", name="上传并预览").click()
        expect(page.get_by_test_id("state")).to_have_attribute("data-state", "draft")
        expect(page.get_by_test_id("doc-title")).to_have_text(govdocs.TITLE)
        expect(page.get_by_test_id("converted")).to_contain_text("## 二、发放标准")
        expect(page.get_by_test_id("converted")).to_contain_text(govdocs.TABLE_ROW)
        chunks = page.get_by_test_id("chunk")
        expect(chunks.first).to_be_visible()
        assert chunks.count() >= 3
        expect(page.get_by_test_id("chunks")).to_contain_text("二、发放标准")
        page.screenshot(path=shots / "documents-01-preview.png", full_page=True)
        page.get_by_role("button", name="发布", exact=True).click()
        expect(page.get_by_test_id("notice")).to_contain_text("已加入知识库")
        expect(page.get_by_test_id("state")).to_have_attribute("data-state", "published")

        citizen = context.new_page()
        citizen.goto(documents_server + "/")
        citizen.wait_for_selector("[data-testid=app][data-ready=true]")
        assert f"来源：《{govdocs.TITLE}》（2026年1月）" in say(citizen, QUESTION)

        # The Word file as version 2: a draft (citizens still get v1), then published.
        page.locator("#new-file").set_input_files(str(docx))
        page.locator("#new-title").fill(REVISED)
        page.locator("#new-as_of").fill("2026-02")
        page.get_by_role("button", name="上传新版本").click()
        expect(page.get_by_test_id("state")).to_have_attribute("data-state", "draft")
        expect(page.get_by_test_id("converted")).to_contain_text(govdocs.TABLE_ROW)
        expect(page.get_by_test_id("versions").locator("tbody tr")).to_have_count(2)
        assert f"《{govdocs.TITLE}》" in say(citizen, QUESTION)
        page.get_by_role("button", name="发布", exact=True).click()
        expect(page.get_by_test_id("notice")).to_contain_text("已发布版本 2")
        assert f"来源：《{REVISED}》（2026年2月）" in say(citizen, QUESTION)

        page.get_by_role("link", name="← 全部知识文档").click()
        expect(page.get_by_test_id("documents")).to_contain_text("已发布 v2")
        page.screenshot(path=shots / "documents-02-list.png", full_page=True)
    finally:
        context.close()
    assert not errors, errors  # no CSP violation, no script error
