"""Accessibility in Chromium: axe-core finds no serious or critical violation on the chat
page (greeting, a business with an enum field, confirming), the photo step's upload panel
and the widget; the page works at 200% text at 1280 and 390 px without horizontal
scrolling; no meaning rests on an emoji glyph.

axe-core is the npm package pinned in ``tests/browser/axe/package-lock.json``;
``scripts/test.sh`` runs ``npm ci`` there. The page's own CSP allows no inline script,
so the contexts here bypass CSP to inject it (``add_script_tag``). Screenshots at 200%
text go to ``test-artifacts/browser/a11y-*.png``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from si_agent.app import build_controller
from si_agent.config.settings import Settings
from si_agent.server import create_app
from si_agent.testing import FakeIdPhoto
from tests.browser.conftest import ROOT, serving
from tests.browser.test_chat_page import PHONE, ZHANG_WEI_ID, say
from tests.browser.test_upload_page import AnyFace, CardFromPixels
from tests.browser.test_widget import open_host, open_widget, sites  # noqa: F401

try:
    from playwright.sync_api import Page, expect
except ImportError:  # the fixtures skip (or fail under SI_REQUIRE_BROWSER) without it
    Page = expect = None

pytestmark = pytest.mark.browser

AXE = ROOT / "tests" / "browser" / "axe" / "node_modules" / "axe-core" / "axe.min.js"
DESKTOP = {"width": 1280, "height": 800}
# What the tests hold to: WCAG 2.x A and AA rules plus axe's best practices.
AXE_OPTIONS = {
    "runOnly": {
        "type": "tag",
        "values": ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa", "best-practice"],
    },
    "iframes": False,
}
# Emoji and pictographs (not CJK, not the ✓ ○ ✕ status marks the page hides from readers).
EMOJI = re.compile(
    "[\U0001f000-\U0001faff\u2600-\u26ff\u2b50\u2b55\ufe0f\u2700-\u2712\u2714\u2716-\u27bf]"
)


@pytest.fixture(scope="session")
def axe_path() -> Path:
    if not AXE.exists():
        hint = "run `npm ci --prefix tests/browser/axe` (scripts/test.sh does)"
        if os.environ.get("SI_REQUIRE_BROWSER"):
            pytest.fail(f"axe-core is not installed: {hint}", pytrace=False)
        pytest.skip(f"axe-core is not installed: {hint}")
    return AXE


@pytest.fixture(scope="module")
def live_server(tmp_path_factory) -> Iterator[str]:
    """The app with stand-in photo handlers (as in test_upload_page), for the photo step."""
    settings = Settings(
        business_dir=Settings().business_dir,
        knowledge="none",
        data_dir=tmp_path_factory.mktemp("a11y-page"),
        session_store="memory",
        rate_limit="1000 per minute",
    )
    base = build_controller(settings)
    controller = type(base)(
        base.catalog,
        base.store,
        base.engine,
        base.executor,
        step_handlers={
            "id_card_ocr": CardFromPixels(),
            "face_match": AnyFace(),
            "id_photo": FakeIdPhoto(),
        },
    )
    with serving(create_app(settings, controller=controller)) as url:
        yield url


def serious_violations(page_or_frame, axe_path: Path, context: str = "document") -> list[str]:
    """axe-core's serious and critical violations, one line each (rule, impact, targets)."""
    if not page_or_frame.evaluate("() => typeof window.axe === 'object'"):
        page_or_frame.add_script_tag(path=str(axe_path))
    results = page_or_frame.evaluate(f"(options) => axe.run({context}, options)", AXE_OPTIONS)
    return [
        f"{v['id']} ({v['impact']}): {v['help']}: "
        + "; ".join(" ".join(map(str, n["target"])) for n in v["nodes"][:5])
        for v in results["violations"]
        if v["impact"] in ("serious", "critical")
    ]


def test_the_chat_page_has_no_serious_violation(open_page, axe_path):
    page = open_page(DESKTOP, bypass_csp=True)
    assert serious_violations(page, axe_path) == [], "the greeting"

    say(page, "社保卡丢了")
    say(page, ZHANG_WEI_ID)
    say(page, "张伟")
    say(page, "13812345678")
    expect(page.get_by_test_id("field-loss_type")).to_have_attribute("aria-current", "step")
    assert serious_violations(page, axe_path) == [], "an enum field awaited"

    say(page, "临时挂失")
    expect(page.get_by_test_id("state-badge")).to_have_text("待确认")
    assert serious_violations(page, axe_path) == [], "confirming"

    page.get_by_test_id("reset").click()  # the question asked in the conversation
    expect(page.get_by_test_id("ask")).to_be_visible()
    assert serious_violations(page, axe_path) == [], "asked before starting again"


def test_the_phone_page_and_its_drawer(open_page, axe_path):
    page = open_page(PHONE, bypass_csp=True, device_scale_factor=2, is_mobile=True, has_touch=True)
    say(page, "社保卡丢了")
    assert serious_violations(page, axe_path) == [], "a business on a phone"
    page.get_by_test_id("panel-toggle").click()
    expect(page.get_by_test_id("panel")).to_be_visible()
    page.wait_for_timeout(300)  # the slide-in
    assert serious_violations(page, axe_path) == [], "the drawer open"


def test_the_photo_step_has_no_serious_violation(open_page, axe_path):
    page = open_page(DESKTOP, bypass_csp=True)
    say(page, "我要做养老金资格认证")
    expect(page.get_by_test_id("upload")).to_be_visible()
    assert serious_violations(page, axe_path) == [], "the upload panel"


def test_the_widget_has_no_serious_violation(sites, open_host, axe_path):  # noqa: F811
    page = open_host(sites["host"] + "/", bypass_csp=True)
    assert serious_violations(page, axe_path) == [], "the launcher"
    chat = open_widget(page)
    # The host page with the widget's dialog (its shadow root), then the chat inside.
    assert serious_violations(page, axe_path) == [], "the widget open"
    frame = page.get_by_test_id("si-agent-frame").element_handle().content_frame()
    assert frame is not None
    expect(chat.get_by_test_id("message-input")).to_be_visible()
    assert serious_violations(frame, axe_path) == [], "the chat in the widget"


# -- 200% text ------------------------------------------------------------------------


# Chromium's own text size setting (chrome://settings/fonts, "font size"), in a new
# profile's Preferences: the default font size 32 px instead of 16 px.
LARGE_TEXT = {"webkit": {"webprefs": {"default_font_size": 32}}}


def no_horizontal_scrolling(page: Page) -> dict:
    return page.evaluate("""() => ({
        scroll: document.documentElement.scrollWidth,
        client: document.documentElement.clientWidth,
        wide: [...document.querySelectorAll("body *")].filter((el) => {
            const r = el.getBoundingClientRect();
            return r.width > 0 && r.right > document.documentElement.clientWidth + 1;
        }).map((el) => el.dataset.testid || el.id || el.className).slice(0, 8),
    })""")


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["1280px", "390px"])
def test_200_percent_text_without_horizontal_scrolling(open_page, artifacts, viewport):
    page = open_page(viewport, preferences=LARGE_TEXT)
    name = f"a11y-{viewport['width']}-200"
    size = page.evaluate("getComputedStyle(document.querySelector('.bubble')).fontSize")
    assert float(size.removesuffix("px")) >= 28, "the text really is twice its size"
    page.screenshot(path=artifacts / f"{name}-greeting.png")
    width = no_horizontal_scrolling(page)
    assert width["scroll"] <= width["client"], width

    say(page, "有哪些业务可以办")  # every service as a button: the conversation keeps room
    page.screenshot(path=artifacts / f"{name}-services.png")
    log = page.get_by_test_id("messages").bounding_box()
    assert log and log["height"] >= viewport["height"] * 0.15, log
    width = no_horizontal_scrolling(page)
    assert width["scroll"] <= width["client"], width

    say(page, "社保卡丢了")
    say(page, ZHANG_WEI_ID)
    say(page, "张伟")
    say(page, "13812345678")
    page.screenshot(path=artifacts / f"{name}-enum.png")
    width = no_horizontal_scrolling(page)
    assert width["scroll"] <= width["client"], width
    say(page, "临时挂失")
    expect(page.get_by_test_id("confirm")).to_be_visible()
    page.screenshot(path=artifacts / f"{name}-confirming.png")
    width = no_horizontal_scrolling(page)
    assert width["scroll"] <= width["client"], width
    # Everything needed to go on is on the screen: the box, send and confirm.
    for testid in ("message-input", "send", "confirm"):
        box = page.get_by_test_id(testid).bounding_box()
        assert box and box["x"] >= 0 and box["x"] + box["width"] <= viewport["width"], testid


# -- emoji ------------------------------------------------------------------------------


def test_no_meaning_rests_on_an_emoji(open_page):
    """The page, its scripts and the citizen-facing texts (business YAML, replies) use no
    emoji; the page's own symbols are hidden from screen readers beside a text."""
    sources = [
        ROOT / "si_agent" / "server" / "static" / name
        for name in ("index.html", "app.js", "widget.js", "style.css")
    ]
    sources += sorted((ROOT / "businesses").glob("*.yaml"))
    sources += [ROOT / "si_agent" / "replies.py", ROOT / "si_agent" / "config" / "assistant.py"]
    found = {str(p.relative_to(ROOT)): EMOJI.findall(p.read_text("utf-8")) for p in sources}
    assert {k: v for k, v in found.items() if v} == {}

    page = open_page()
    say(page, "社保转移需要什么材料？")
    expect(page.get_by_test_id("suggestion")).to_be_visible()
    assert not EMOJI.search(page.locator("body").inner_text())
