"""The page's photo upload in Chromium: the control appears for a step with its prompt,
a gallery pick and a separate camera; an upload reads 上传中 → 识别中 → 已通过 / 未通过
(never "已上传" beside a refused photo); a file that is no image shows no preview and
changes nothing; the panel lists the steps with their status; the pick buttons show
the keyboard focus. Screenshots at desktop and 390 px width go to the artifacts."""

from __future__ import annotations

import io
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from PIL import Image

from si_agent.app import build_controller
from si_agent.config.settings import Settings
from si_agent.flow.steps import StepResult
from si_agent.server import create_app
from si_agent.testing import FakeIdPhoto
from tests.browser.conftest import serving
from tests.browser.test_chat_page import say

try:
    from playwright.sync_api import expect
except ImportError:  # the fixtures skip (or fail under SI_REQUIRE_BROWSER) without it
    expect = None

pytestmark = pytest.mark.browser


class CardFromPixels:
    """``id_card_ocr`` stand-in: a red photo is 张伟's card, anything else unreadable.
    It takes a moment, as reading a card does, so that 识别中 can be seen."""

    def run(self, step, upload, context):
        time.sleep(0.8)
        with Image.open(io.BytesIO(upload.data)) as image:
            red = image.convert("RGB").getpixel((0, 0))[0] > 150
        if not red:
            return StepResult(error="照片中没有识别到身份证。")
        return StepResult(fields={"name": "张伟", "id_number": "330122196303150178"})


class AnyFace:
    """``face_match`` stand-in: a green photo is someone else, anything else the holder."""

    def run(self, step, upload, context):
        with Image.open(io.BytesIO(upload.data)) as image:
            r, g, b = image.convert("RGB").getpixel((0, 0))
        if g > 150 and r < 100:
            return StepResult(error="人脸照片与身份证照片不是同一人，请本人正对镜头重新拍摄。")
        return StepResult(data={"same_person": True})


@pytest.fixture(scope="module")
def live_server(tmp_path_factory) -> Iterator[str]:
    """This module's own app: the real one, with stand-in photo handlers."""

    settings = Settings(business_dir=Settings().business_dir, knowledge="none",
                        data_dir=tmp_path_factory.mktemp("upload-page"),
                        session_store="memory", rate_limit="1000 per minute")
    base = build_controller(settings)
    controller = type(base)(base.catalog, base.store, base.engine, base.executor,
                            step_handlers={"id_card_ocr": CardFromPixels(), "face_match": AnyFace(),
                                           "id_photo": FakeIdPhoto()})
    with serving(create_app(settings, controller=controller)) as url:
        yield url


def photo(path, color) -> str:
    Image.new("RGB", (320, 200), color).save(path, "JPEG")
    return str(path)


def upload(page, path) -> None:
    replies = page.get_by_test_id("message-assistant")
    before = replies.count()
    page.get_by_test_id("upload-input").set_input_files(path)
    expect(page.get_by_test_id("app")).to_have_attribute("data-busy", "false")
    return before


SHOTS = Path("/tmp/photos-shots")


def shot(page, artifacts, name: str) -> None:
    """A screenshot in the artifacts (and in /tmp/photos-shots, to look at)."""
    path = artifacts / f"upload-{name}.png"
    page.screenshot(path=path, full_page=True)
    SHOTS.mkdir(exist_ok=True)
    shutil.copy(path, SHOTS / path.name)


def step_status(page, step_id: str):
    return page.get_by_test_id(f"step-{step_id}").get_by_test_id("step-status")


def test_photo_steps_on_the_page(open_page, tmp_path, artifacts):
    page = open_page()
    control = page.get_by_test_id("upload")
    status = page.get_by_test_id("upload-status")
    expect(control).to_be_hidden()
    expect(page.get_by_test_id("steps")).to_be_hidden()
    say(page, "我要做养老金资格认证")
    expect(control).to_be_visible()
    expect(page.get_by_test_id("upload-title")).to_have_text("上传身份证照片")
    expect(page.get_by_test_id("upload-prompt")).to_contain_text("身份证人像面")
    # The camera is offered (拍照, the back camera for a card), not forced on 选择照片.
    pick = page.get_by_test_id("upload-input")
    expect(pick).to_have_attribute("accept", "image/*")
    assert pick.get_attribute("capture") is None
    expect(page.get_by_test_id("upload-camera")).to_have_attribute("capture", "environment")
    expect(page.get_by_test_id("upload-camera")).to_have_attribute("accept", "image/*")
    expect(page.get_by_test_id("upload-camera-label")).to_have_text("拍照")
    expect(step_status(page, "id_card_photo")).to_have_text("待上传")
    expect(step_status(page, "face_photo")).to_have_text("待办理")

    # Not an image: the error is shown, no (broken) preview, nothing changes.
    not_image = tmp_path / "scan.jpg"
    not_image.write_bytes(b"%PDF-1.4 not a photo")
    before = upload(page, str(not_image))
    expect(status).to_have_text("只能上传 JPG、PNG 或 WebP 格式的照片。")
    expect(page.get_by_test_id("upload-preview")).to_be_hidden()
    expect(page.get_by_test_id("message-assistant")).to_have_count(before)
    expect(page.get_by_test_id("state-badge")).to_have_text("材料核验中")

    # A readable image that is no card: 上传中/识别中, then 未通过 with the reason.
    page.get_by_test_id("upload-input").set_input_files(photo(tmp_path / "blue.jpg", (20, 40, 200)))
    expect(status).to_have_text("识别中…")
    expect(page.get_by_test_id("app")).to_have_attribute("data-busy", "false")
    expect(status).to_have_text("未通过：照片中没有识别到身份证。")
    expect(control).to_have_attribute("data-outcome", "failed")
    expect(page.get_by_test_id("message-assistant").last).to_contain_text("没有识别到身份证")
    expect(page.get_by_test_id("upload-preview")).to_be_visible()
    expect(step_status(page, "id_card_photo")).to_have_text("未通过")
    assert "已上传" not in control.inner_text()

    upload(page, photo(tmp_path / "card.jpg", (220, 30, 30)))
    expect(page.get_by_test_id("message-assistant").last).to_contain_text("身份证照片已完成")
    expect(page.get_by_test_id("upload-title")).to_have_text("上传人脸照片")
    expect(status).to_have_text("身份证照片已通过")
    expect(page.get_by_test_id("upload-preview")).to_be_hidden()  # that one was the card's
    expect(page.get_by_test_id("upload-camera")).to_have_attribute("capture", "user")
    assert page.get_by_test_id("upload-input").get_attribute("capture") is None
    expect(page.get_by_test_id("field-name")).to_have_attribute("data-status", "collected")
    expect(step_status(page, "id_card_photo")).to_have_text("已通过")
    expect(step_status(page, "face_photo")).to_have_text("待上传")

    # Someone else's face: asked again, the card stays read.
    upload(page, photo(tmp_path / "other.jpg", (30, 200, 60)))
    expect(status).to_have_text("未通过：人脸照片与身份证照片不是同一人，请本人正对镜头重新拍摄。")
    expect(step_status(page, "face_photo")).to_have_text("未通过")
    expect(step_status(page, "id_card_photo")).to_have_text("已通过")
    expect(page.get_by_test_id("field-name")).to_have_attribute("data-status", "collected")
    shot(page, artifacts, "desktop-face-refused")

    upload(page, photo(tmp_path / "face.jpg", (230, 200, 180)))
    expect(control).to_be_hidden()
    expect(page.get_by_test_id("state-badge")).to_have_text("信息收集中")
    expect(step_status(page, "face_photo")).to_have_text("已通过")
    expect(page.get_by_test_id("message-user").last.get_by_test_id("message-text")).to_have_text(
        "[上传照片]")
    shot(page, artifacts, "desktop-steps-passed")


def test_the_upload_buttons_show_the_keyboard_focus(open_page, artifacts):
    page = open_page()
    say(page, "我要做养老金资格认证")
    page.get_by_test_id("message-input").focus()
    for _ in range(3):  # back from the text box: 拍照 comes first, then 选择照片
        page.keyboard.press("Shift+Tab")
        if page.evaluate("document.activeElement.id") == "upload-input":
            break
    assert page.evaluate("document.activeElement.id") == "upload-input"
    outline = page.evaluate("""() => {
        const s = getComputedStyle(document.querySelector('label[for=upload-input]'));
        return [s.outlineStyle, parseFloat(s.outlineWidth)];
    }""")
    assert outline[0] == "solid" and outline[1] >= 2, outline
    page.get_by_test_id("upload").screenshot(path=artifacts / "upload-desktop-focus.png")
    shutil.copy(artifacts / "upload-desktop-focus.png", SHOTS / "upload-desktop-focus.png")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.id") == "upload-camera"
    assert page.evaluate("getComputedStyle(document.querySelector('label[for=upload-camera]'))"
                         ".outlineStyle") == "solid"


def test_the_photo_step_on_a_phone(open_page, tmp_path, artifacts):
    page = open_page({"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    say(page, "我要做养老金资格认证")
    upload(page, photo(tmp_path / "blue.jpg", (20, 40, 200)))
    expect(page.get_by_test_id("upload-status")).to_have_text("未通过：照片中没有识别到身份证。")
    # Everything fits the narrow screen: no sideways scrolling.
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    shot(page, artifacts, "phone-card-refused")
    upload(page, photo(tmp_path / "card.jpg", (220, 30, 30)))
    expect(page.get_by_test_id("upload-status")).to_have_text("身份证照片已通过")
    shot(page, artifacts, "phone-face-step")
    page.get_by_test_id("panel-toggle").click()
    page.wait_for_function("() => { const r = document.getElementById('panel')"
                           ".getBoundingClientRect(); return r.right <= window.innerWidth + 1; }")
    page.wait_for_timeout(300)  # the drawer's slide has ended
    expect(step_status(page, "id_card_photo")).to_be_visible()
    expect(step_status(page, "id_card_photo")).to_have_text("已通过")
    expect(step_status(page, "face_photo")).to_have_text("待上传")
    shot(page, artifacts, "phone-panel-steps")


def test_an_optional_photo_next_to_the_fields(open_page, tmp_path):
    page = open_page()
    control = page.get_by_test_id("upload")
    say(page, "我要申请社保卡")
    # Offered while the fields are collected, without taking the text input away.
    expect(control).to_be_visible()
    expect(page.get_by_test_id("upload-title")).to_have_text("上传证件照（可选）")
    expect(page.get_by_test_id("upload-camera")).to_have_attribute("capture", "user")
    expect(page.get_by_test_id("message-input")).to_be_enabled()
    expect(step_status(page, "id_photo")).to_have_text("可选，未上传")
    say(page, "张伟")
    expect(page.get_by_test_id("field-name")).to_have_attribute("data-status", "collected")
    upload(page, photo(tmp_path / "me.jpg", (236, 236, 232)))
    expect(page.get_by_test_id("message-assistant").last).to_contain_text("证件照已完成")
    expect(control).to_be_hidden()
    expect(step_status(page, "id_photo")).to_have_text("已通过")
    expect(page.get_by_test_id("state-badge")).to_have_text("信息收集中")
