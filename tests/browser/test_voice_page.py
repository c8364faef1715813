"""Voice input in Chromium with its fake microphone (a committed clip played as the
microphone): tap to record, a visible recording state and timer, tap to send; the
transcript replaces the placeholder in the citizen's bubble; a refused microphone
says so in Chinese; without a recogniser there is no microphone button."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from si_agent.server import create_app
from si_agent.testing.fake_openai import FakeOpenAI
from tests.browser.conftest import CHROMIUM, CHROMIUM_ARGS, DESKTOP, TIMEOUT_MS, serving

try:
    from playwright.sync_api import expect
except ImportError:  # the fixtures skip (or fail under SI_REQUIRE_BROWSER) without it
    expect = None

pytestmark = pytest.mark.browser
pytest.importorskip("av", reason="needs the voice extra: pip install 'si_agent[voice]'")

CLIP = Path(__file__).resolve().parents[1] / "voice" / "clips" / "req01.wav"


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server


@pytest.fixture
def voice_server(server_settings, fake) -> Iterator[str]:
    url = f"http://127.0.0.1:{fake._server.server_port}/v1"
    with serving(create_app(server_settings.replace(asr="openai", asr_base_url=url))) as base:
        yield base


def launch(driver, tmp_path, base: str, *, microphone: bool):
    args = list(CHROMIUM_ARGS)
    if microphone:
        args += ["--use-fake-ui-for-media-stream", "--use-fake-device-for-media-stream",
                 f"--use-file-for-fake-audio-capture={CLIP}"]
    context = driver.chromium.launch_persistent_context(
        str(tmp_path / f"profile-{microphone}"), executable_path=str(CHROMIUM), headless=True,
        args=args, viewport=DESKTOP, locale="zh-CN")
    context.set_default_timeout(TIMEOUT_MS)
    if microphone:
        context.grant_permissions(["microphone"], origin=base)
    page = context.pages[0] if context.pages else context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda err: errors.append(str(err)))
    page.goto(base + "/")
    page.wait_for_selector("[data-testid=app][data-ready=true]")
    return context, page, errors


def test_record_and_send_a_spoken_message(playwright_driver, voice_server, fake, tmp_path,
                                          artifacts):
    context, page, errors = launch(playwright_driver, tmp_path, voice_server, microphone=True)
    try:
        mic = page.get_by_test_id("mic")
        expect(mic).to_be_visible()
        expect(mic).to_have_text("语音输入")
        fake.push({"text": "我要辦理社保卡申領"})
        mic.click()
        expect(mic).to_have_attribute("aria-pressed", "true")
        expect(mic).to_have_text("说完了")
        state = page.get_by_test_id("mic-state")
        expect(state).to_be_visible()
        expect(state).to_contain_text("正在录音")
        expect(page.get_by_test_id("mic-timer")).to_have_text("0:01", timeout=3000)
        page.screenshot(path=str(artifacts / "voice-recording.png"))
        mic.click()
        expect(mic).to_have_attribute("aria-pressed", "false")
        user = page.get_by_test_id("message-user").last
        expect(user.get_by_test_id("message-text")).to_have_text("我要办理社保卡申领")
        expect(user).to_have_attribute("data-voice", "true")
        reply = page.get_by_test_id("message-assistant").last
        expect(reply).to_contain_text("社保卡申领")
        expect(page.get_by_test_id("business-name")).to_have_text("社保卡申领")
        page.screenshot(path=str(artifacts / "voice-sent.png"))
        sent = fake.transcriptions[-1]
        assert sent["file_type"].startswith("audio/webm") and sent["file_bytes"] > 1000
        assert sent["prompt"].startswith("社会保险，")
        page.set_viewport_size({"width": 390, "height": 844})  # a phone
        expect(mic).to_be_visible()
        expect(page.get_by_test_id("panel")).to_have_attribute("data-open", "false")
        page.wait_for_timeout(400)  # the panel's slide-out
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
        page.screenshot(path=str(artifacts / "voice-390.png"))
        assert not errors
    finally:
        context.close()


def test_a_refused_microphone_is_explained(playwright_driver, voice_server, tmp_path):
    context, page, errors = launch(playwright_driver, tmp_path, voice_server, microphone=False)
    try:
        page.get_by_test_id("mic").click()
        toast = page.get_by_test_id("toast")
        expect(toast).to_be_visible()
        expect(toast).to_contain_text("麦克风")
        expect(page.get_by_test_id("mic")).to_have_attribute("aria-pressed", "false")
        expect(page.get_by_test_id("send")).to_be_enabled()
        assert not errors
    finally:
        context.close()


def test_no_microphone_without_a_recogniser(playwright_driver, server_settings, tmp_path):
    with serving(create_app(server_settings.replace(asr="none"))) as base:
        context, page, errors = launch(playwright_driver, tmp_path, base, microphone=False)
        try:
            expect(page.get_by_test_id("mic")).to_be_hidden()
            assert not errors
        finally:
            context.close()
