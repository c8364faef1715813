"""Stand-ins for the outside world behind photo steps: an ID-card reader and a face matcher.

They "read" the upload's file name instead of its pixels, so dialogues with
photo steps can be replayed without an OCR engine: ``zhangwei.jpg`` is the
demo person 张伟's ID card; any other name is unreadable. A face photo whose
name contains ``stranger`` is not the card holder. An ID photo (证件照) whose name
contains ``dark`` has the wrong background; any other gives a plain 358x441 JPEG. Used by tests and replays
only; the real handlers are registered by name like any other.
"""

from __future__ import annotations

import io
from pathlib import PurePath

from PIL import Image

from si_agent.config.model import Step
from si_agent.flow.steps import StepContext, StepResult, Upload
from si_agent.photo.idphoto import SIZE

DEMO_CARDS: dict[str, dict[str, str]] = {
    "zhangwei.jpg": {"name": "张伟", "id_number": "330122196303150178"},
    "lixiuying.jpg": {"name": "李秀英", "id_number": "310104196806120281"},
}
UNREADABLE = "照片不清晰，无法识别。"
BAD_BACKGROUND = "请在浅色纯色背景前重新拍摄。"


class FakeCardReader:
    """``id_card_ocr`` by file name; records every upload it saw."""

    def __init__(self, cards: dict[str, dict[str, str]] | None = None) -> None:
        self.cards = DEMO_CARDS if cards is None else cards
        self.calls: list[str] = []

    def run(self, step: Step, upload: Upload, context: StepContext) -> StepResult:
        self.calls.append(upload.ref)
        card = self.cards.get(PurePath(upload.ref.replace("\\", "/")).name)
        if card is None:
            return StepResult(error=UNREADABLE)
        return StepResult(fields=dict(card), data={"side": "portrait"})


class FakeFaceMatcher:
    """``face_match`` that compares with the card read earlier (through the context)."""

    def __init__(self) -> None:
        self.calls: list[str] = []
        self.saw_card: list[bool] = []

    def run(self, step: Step, upload: Upload, context: StepContext) -> StepResult:
        self.calls.append(upload.ref)
        self.saw_card.append(bool(context.step_data.get("id_card_photo"))
                             and bool(context.values.get("id_number")))
        return StepResult(data={"same_person": "stranger" not in upload.ref})


class FakeIdPhoto:
    """``id_photo`` by file name: sends a plain light 358x441 JPEG to the backend."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def run(self, step: Step, upload: Upload, context: StepContext) -> StepResult:
        self.calls.append(upload.ref)
        if "dark" in upload.ref:
            return StepResult(error=BAD_BACKGROUND)
        out = io.BytesIO()
        Image.new("RGB", SIZE, (236, 236, 232)).save(out, "JPEG")
        return StepResult(data={"width": SIZE[0], "height": SIZE[1], "format": "jpeg"},
                          files={"photo": out.getvalue()}, submit=("photo",))


def fake_step_handlers() -> dict[str, FakeCardReader | FakeFaceMatcher | FakeIdPhoto]:
    return {"id_card_ocr": FakeCardReader(), "face_match": FakeFaceMatcher(),
            "id_photo": FakeIdPhoto()}
