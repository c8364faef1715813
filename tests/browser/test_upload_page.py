"""The page's photo upload in Chromium: the control appears for a step with its prompt and
camera, a bad file shows the error and changes nothing, a good one moves the step on."""

from __future__ import annotations

import io
from collections.abc import Iterator

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
    """``id_card_ocr`` stand-in: a red photo is 张伟's card, anything else unreadable."""

    def run(self, step, upload, context):
        with Image.open(io.BytesIO(upload.data)) as image:
            red = image.convert("RGB").getpixel((0, 0))[0] > 150
        if not red:
            return StepResult(error="照片中没有识别到身份证。")
        return StepResult(fields={"name": "张伟", "id_number": "330122196303150178"})


class AnyFace:
    def run(self, step, upload, context):
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


def test_photo_steps_on_the_page(open_page, tmp_path, artifacts):
    page = open_page()
    control = page.get_by_test_id("upload")
    expect(control).to_be_hidden()
    say(page, "我要做养老金资格认证")
    expect(control).to_be_visible()
    expect(page.get_by_test_id("upload-title")).to_have_text("上传身份证照片")
    expect(page.get_by_test_id("upload-prompt")).to_contain_text("身份证人像面")
    expect(page.get_by_test_id("upload-input")).to_have_attribute("capture", "environment")
    expect(page.get_by_test_id("upload-input")).to_have_attribute("accept", "image/*")

    # Not an image: the error is shown, nothing changes, and another try works.
    not_image = tmp_path / "scan.jpg"
    not_image.write_bytes(b"%PDF-1.4 not a photo")
    before = upload(page, str(not_image))
    expect(page.get_by_test_id("upload-status")).to_have_text("只能上传 JPG、PNG 或 WebP 格式的照片。")
    expect(page.get_by_test_id("message-assistant")).to_have_count(before)
    expect(page.get_by_test_id("state-badge")).to_have_text("材料核验中")

    upload(page, photo(tmp_path / "blue.jpg", (20, 40, 200)))  # readable image, no card
    expect(page.get_by_test_id("message-assistant").last).to_contain_text("没有识别到身份证")
    expect(page.get_by_test_id("upload-preview")).to_be_visible()

    upload(page, photo(tmp_path / "card.jpg", (220, 30, 30)))
    expect(page.get_by_test_id("message-assistant").last).to_contain_text("身份证照片已完成")
    expect(page.get_by_test_id("upload-title")).to_have_text("上传人脸照片")
    expect(page.get_by_test_id("upload-input")).to_have_attribute("capture", "user")
    expect(page.get_by_test_id("field-name")).to_have_attribute("data-status", "collected")
    page.screenshot(path=artifacts / "upload-01-face-step.png")

    upload(page, photo(tmp_path / "face.jpg", (230, 200, 180)))
    expect(control).to_be_hidden()
    expect(page.get_by_test_id("state-badge")).to_have_text("信息收集中")
    expect(page.get_by_test_id("message-user").last.get_by_test_id("message-text")).to_have_text(
        "[上传照片]")


def test_an_optional_photo_next_to_the_fields(open_page, tmp_path):
    page = open_page()
    control = page.get_by_test_id("upload")
    say(page, "我要申请社保卡")
    # Offered while the fields are collected, without taking the text input away.
    expect(control).to_be_visible()
    expect(page.get_by_test_id("upload-title")).to_have_text("上传证件照（可选）")
    expect(page.get_by_test_id("upload-input")).to_have_attribute("capture", "user")
    expect(page.get_by_test_id("message-input")).to_be_enabled()
    say(page, "张伟")
    expect(page.get_by_test_id("field-name")).to_have_attribute("data-status", "collected")
    upload(page, photo(tmp_path / "me.jpg", (236, 236, 232)))
    expect(page.get_by_test_id("message-assistant").last).to_contain_text("证件照已完成")
    expect(control).to_be_hidden()
    expect(page.get_by_test_id("state-badge")).to_have_text("信息收集中")
