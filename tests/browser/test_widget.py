"""The widget in Chromium: a bureau's page on another origin includes ``/widget.js``.

The host page is served from another loopback address (127.0.0.2, another origin
and another site than the assistant's 127.0.0.1), under a strict CSP of its own, with
styles that would clash with the widget's. The assistant lists it in
``SI_EMBED_ORIGINS``; a page on 127.0.0.3, not listed, is refused the frame.
Screenshots go to ``test-artifacts/browser/widget-*.png``.
"""

from __future__ import annotations

import html
import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from si_agent.server import create_app
from tests.browser.conftest import CHROMIUM, CHROMIUM_ARGS, DESKTOP, TIMEOUT_MS, serving

try:
    from playwright.sync_api import FrameLocator, Page, expect
except ImportError:  # the fixtures skip (or fail under SI_REQUIRE_BROWSER) without it
    FrameLocator = Page = expect = None

pytestmark = pytest.mark.browser

PHONE = {"width": 390, "height": 844}
TITLE = "社保智能帮办"

# A bureau's page: its own strict CSP (the widget needs script-src and frame-src for the
# assistant, nothing inline) and greedy styles the widget must not pick up.
HOST_PAGE = """<!doctype html>
<html lang="zh-CN"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>某市人力资源和社会保障局</title>
<link rel="stylesheet" href="/host.css">
</head><body>
<h1 class="title">某市人力资源和社会保障局</h1>
<p class="panel">政务公开 · 办事服务 · 互动交流</p>
<button type="button" id="host-button">本站按钮</button>
<script src="{assistant}/widget.js" data-title="{title}"{position} defer></script>
</body></html>
"""
# Chromium's own "block third-party cookies" setting (chrome://settings/cookies), in a
# new profile's Preferences: it also denies third-party frames their storage.
BLOCK_THIRD_PARTY = {"profile": {"cookie_controls_mode": 1}}
HOST_CSS = """
body { font-family: serif; color: #333; margin: 24px; }
button { background: rgb(255, 0, 0) !important; font-size: 30px !important; }
.title, .panel { color: rgb(0, 128, 0); }
iframe { display: none !important; }
"""


def host_site(assistant: Callable[[], str]):
    """A WSGI app serving the host page that includes the widget from ``assistant()``."""
    def app(environ, start_response):
        path = environ.get("PATH_INFO", "/")
        if path == "/host.css":
            body, kind = HOST_CSS, "text/css"
        elif path == "/":
            left = environ.get("QUERY_STRING") == "position=left"
            body = HOST_PAGE.format(assistant=assistant(), title=html.escape(TITLE),
                                    position=' data-position="left"' if left else "")
            kind = "text/html; charset=utf-8"
        else:
            start_response("404 Not Found", [("Content-Type", "text/plain")])
            return [b"not found"]
        start_response("200 OK", [
            ("Content-Type", kind),
            ("Content-Security-Policy",
             f"default-src 'self'; script-src 'self' {assistant()}; frame-src {assistant()}; "
             "style-src 'self'"),
        ])
        return [body.encode("utf-8")]

    return app


@pytest.fixture(scope="module")
def sites(server_settings, tmp_path_factory) -> Iterator[dict[str, str]]:
    """The assistant (embedding allowed for ``host`` only), ``host`` and ``stranger``."""
    urls: dict[str, str] = {}
    with serving(host_site(lambda: urls["assistant"]), host="127.0.0.2") as host, \
            serving(host_site(lambda: urls["assistant"]), host="127.0.0.3") as stranger:
        settings = server_settings.replace(embed_origins=(host,),
                                           data_dir=tmp_path_factory.mktemp("widget-data"))
        with serving(create_app(settings)) as assistant:
            urls.update(assistant=assistant, host=host, stranger=stranger)
            yield urls


@pytest.fixture
def open_host(playwright_driver, tmp_path: Path) -> Iterator[Callable[..., Page]]:
    """``open_host(url, viewport, preferences, **context_options)``: a fresh Chromium
    profile (with those Preferences) at a host page."""
    contexts = []
    page_errors: list[str] = []

    def open_host(url: str, viewport: dict = DESKTOP, preferences: dict | None = None,
                  **options) -> Page:
        profile = tmp_path / f"profile-{len(contexts)}"
        if preferences:
            (profile / "Default").mkdir(parents=True)
            (profile / "Default" / "Preferences").write_text(json.dumps(preferences), "utf-8")
        context = playwright_driver.chromium.launch_persistent_context(
            str(profile), executable_path=str(CHROMIUM),
            headless=True, args=CHROMIUM_ARGS, viewport=viewport, locale="zh-CN", **options)
        contexts.append(context)
        context.set_default_timeout(TIMEOUT_MS)
        page = context.pages[0] if context.pages else context.new_page()
        page.on("pageerror", lambda err: page_errors.append(str(err)))
        page.goto(url)
        return page

    yield open_host
    for context in contexts:
        context.close()
    assert not page_errors, f"uncaught errors in the page: {page_errors}"


def launcher(page: Page):
    return page.get_by_role("button", name=TITLE, exact=True)


def frame(page: Page) -> FrameLocator:
    return page.frame_locator("[data-testid=si-agent-frame]")


def focused_in_widget(page: Page) -> str | None:
    """The data-testid of the element focused inside the widget's shadow root."""
    return page.evaluate("""() => {
        const active = document.querySelector("si-agent-widget").shadowRoot.activeElement;
        return active ? active.dataset.testid : null;
    }""")


def say(chat: FrameLocator, text: str) -> str:
    """Send ``text`` in the widget's chat and wait for the streamed reply."""
    replies = chat.get_by_test_id("message-assistant")
    before = replies.count()
    box = chat.get_by_test_id("message-input")
    box.fill(text)
    box.press("Enter")
    expect(replies).to_have_count(before + 1)
    expect(replies.last).to_have_attribute("data-streaming", "false")
    return replies.last.get_by_test_id("message-text").inner_text()


def open_widget(page: Page) -> FrameLocator:
    button = launcher(page)
    expect(button).to_have_attribute("aria-expanded", "false")
    button.click()
    expect(button).to_have_attribute("aria-expanded", "true")
    expect(page.get_by_role("dialog", name=TITLE)).to_be_visible()
    chat = frame(page)
    expect(chat.get_by_test_id("app")).to_have_attribute("data-ready", "true")
    return chat


def test_widget_on_a_bureau_site_on_desktop(sites, open_host, artifacts):
    page = open_host(sites["host"] + "/")
    button = launcher(page)
    expect(button).to_be_visible()
    assert page.get_by_test_id("si-agent-frame").count() == 0  # nothing loaded before a click
    page.screenshot(path=artifacts / "widget-desktop-closed.png")

    # Styles do not cross the shadow root, either way.
    style = "(el) => [getComputedStyle(el).backgroundColor, getComputedStyle(el).fontSize]"
    assert button.evaluate(style) == ["rgb(22, 89, 168)", "16px"]
    assert page.locator("#host-button").evaluate(style) == ["rgb(255, 0, 0)", "30px"]
    assert page.locator("p.panel").evaluate("(el) => getComputedStyle(el).position") == "static"

    chat = open_widget(page)
    expect(chat.get_by_test_id("app")).to_have_attribute("data-embed", "true")
    expect(page.get_by_test_id("si-agent-frame")).to_have_attribute("title", TITLE)
    # Compact header: the big title bar is gone, its heading kept for screen readers.
    header = chat.locator(".topbar").bounding_box()
    assert header and header["height"] <= 52
    expect(chat.get_by_role("heading", name=TITLE, level=1)).to_be_attached()
    # Focus went into the frame: typing lands in the message box.
    expect(chat.get_by_test_id("message-input")).to_be_focused()

    reply = say(chat, "我要办理社保关系转移")
    assert "开始为您办理【社保关系转移】" in reply
    expect(chat.get_by_test_id("business-name")).to_have_text("社保关系转移")
    panel = page.get_by_test_id("si-agent-panel").bounding_box()
    assert panel and panel["width"] == 400 and panel["x"] + panel["width"] <= DESKTOP["width"]
    page.screenshot(path=artifacts / "widget-desktop-open.png")

    # The host page sees neither the conversation nor the token.
    seen = page.evaluate("""() => {
        const frame = document.querySelector("si-agent-widget").shadowRoot.querySelector("iframe");
        let doc = "readable";
        try { doc = frame.contentDocument === null ? null : "readable"; } catch (e) { doc = null; }
        return { doc, local: Object.keys(localStorage), session: Object.keys(sessionStorage),
                 text: document.body.innerText.includes("社保关系转移") };
    }""")
    assert seen == {"doc": None, "local": [], "session": [], "text": False}

    # Esc inside the frame closes the panel and gives focus back to the button.
    chat.get_by_test_id("message-input").press("Escape")
    expect(page.get_by_test_id("si-agent-panel")).to_be_hidden()
    expect(button).to_have_attribute("aria-expanded", "false")
    assert focused_in_widget(page) == "si-agent-launcher"

    # Opened again from the host's script: the same conversation, still there.
    page.evaluate("() => window.SiAgentWidget.open()")
    expect(page.get_by_test_id("si-agent-panel")).to_be_visible()
    expect(chat.get_by_test_id("message-assistant").last).to_contain_text("社保关系转移")
    # Esc on the widget's own close button closes it too.
    page.get_by_test_id("si-agent-close").focus()
    page.keyboard.press("Escape")
    expect(page.get_by_test_id("si-agent-panel")).to_be_hidden()
    assert focused_in_widget(page) == "si-agent-launcher"
    assert page.evaluate("() => window.SiAgentWidget.isOpen()") is False


def test_widget_fills_a_phone_screen(sites, open_host, artifacts):
    page = open_host(sites["host"] + "/", viewport=PHONE)
    button = launcher(page)
    box = button.bounding_box()
    assert box and box["x"] + box["width"] <= PHONE["width"] and box["height"] >= 44
    page.screenshot(path=artifacts / "widget-phone-closed.png")

    chat = open_widget(page)
    panel = page.get_by_test_id("si-agent-panel").bounding_box()
    assert panel == {"x": 0, "y": 0, **PHONE}
    reply = say(chat, "我要办理社保关系转移")
    assert "开始为您办理【社保关系转移】" in reply
    # No sideways scrolling inside the frame.
    overflow = chat.locator("html").evaluate(
        "(el) => el.scrollWidth - el.clientWidth")
    assert overflow <= 0
    page.screenshot(path=artifacts / "widget-phone-open.png")

    # The chat page's own drawer works inside the frame.
    chat.get_by_test_id("panel-toggle").click()
    drawer = chat.get_by_test_id("panel")
    expect(drawer).to_have_attribute("data-open", "true")
    drawer.evaluate("(el) => Promise.all(el.getAnimations().map((a) => a.finished))")
    page.screenshot(path=artifacts / "widget-phone-drawer.png")
    chat.get_by_test_id("panel-close").click()

    page.get_by_role("button", name="关闭" + TITLE).click()
    expect(page.get_by_test_id("si-agent-panel")).to_be_hidden()
    assert focused_in_widget(page) == "si-agent-launcher"


def test_widget_on_the_left(sites, open_host):
    page = open_host(sites["host"] + "/?position=left")
    box = launcher(page).bounding_box()
    assert box and box["x"] == 20
    open_widget(page)
    panel = page.get_by_test_id("si-agent-panel").bounding_box()
    assert panel and panel["x"] == 20


def test_widget_works_where_the_frame_may_not_use_storage(sites, open_host):
    """Third-party cookies blocked: reading window.localStorage throws in the frame
    (SecurityError, "Access is denied"), and the chat works all the same."""
    page = open_host(sites["host"] + "/", preferences=BLOCK_THIRD_PARTY)
    chat = open_widget(page)
    denied = chat.locator("html").evaluate(
        "() => { try { localStorage.length; return null; } catch (e) { return e.name; } }")
    assert denied == "SecurityError"
    assert "开始为您办理【社保关系转移】" in say(chat, "我要办理社保关系转移")
    say(chat, "杭州")  # the same session (its token in memory) answers the next turn
    expect(chat.get_by_test_id("field-from_city")).to_have_attribute("data-status", "collected")
    expect(chat.get_by_test_id("toast")).to_be_hidden()


def test_end_session_in_a_frame_that_may_not_use_storage(sites, open_host):
    """结束办理 where the identity lives in the page's memory only: it is forgotten
    there too, and the next person's message starts a new session."""
    page = open_host(sites["host"] + "/", preferences=BLOCK_THIRD_PARTY)
    chat = open_widget(page)
    say(chat, "我要办理社保关系转移")
    say(chat, "杭州")
    chat.get_by_test_id("end-session").click()
    chat.get_by_test_id("ask-end").click()
    expect(chat.get_by_test_id("message-note")).to_have_text("本次办理已结束，对话和身份信息已清除。")
    assert "您好" in say(chat, "你好")
    expect(chat.get_by_test_id("state-badge")).to_have_text("空闲")
    expect(chat.get_by_test_id("field-from_city")).to_have_count(0)


def test_a_site_not_listed_is_refused_the_frame(sites, open_host, artifacts):
    page = open_host(sites["stranger"] + "/")
    with page.expect_console_message(lambda m: "frame-ancestors" in m.text) as refusal:
        launcher(page).click()
    assert sites["assistant"] in refusal.value.text
    # Until the frame says it is ready it is not shown (the browser's refused-frame page
    # would be): a line says it is opening, then the link takes its place.
    frame = page.get_by_test_id("si-agent-frame")
    assert frame.evaluate("f => f.hidden || getComputedStyle(f).visibility === 'hidden'")
    framed = [f for f in page.frames if f.parent_frame is not None]
    assert len(framed) == 1
    assert framed[0].locator("[data-testid=app]").count() == 0
    # The citizen is not left with a broken frame: a link opens the assistant instead.
    notice = page.get_by_test_id("si-agent-notice")
    expect(notice).to_be_visible()
    expect(page.get_by_test_id("si-agent-frame")).to_be_hidden()
    link = notice.get_by_role("link", name="请点此在新窗口中打开")
    expect(link).to_have_attribute("href", sites["assistant"] + "/")
    expect(link).to_have_attribute("target", "_blank")
    expect(link).to_be_focused()
    expect(page.get_by_test_id("si-agent-loading")).to_be_hidden()
    page.screenshot(path=artifacts / "widget-desktop-refused.png")


def test_the_page_itself_may_not_be_framed_by_default(live_server, open_host):
    """The assistant with no SI_EMBED_ORIGINS (``live_server``): no site frames it."""
    page = open_host(live_server + "/")  # a page of its own origin, framing /?embed=1
    with page.expect_console_message(lambda m: "frame-ancestors" in m.text
                                     or "X-Frame-Options" in m.text):
        page.evaluate("""(src) => {
            const frame = document.createElement("iframe");
            frame.src = src;
            document.body.appendChild(frame);
        }""", live_server + "/?embed=1")
    framed = [f for f in page.frames if f.parent_frame is not None]
    assert len(framed) == 1 and framed[0].locator("[data-testid=app]").count() == 0
