"""The ID-card reader on synthetic cards, with the real OCR engine."""

from __future__ import annotations

import io
import math
import random
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from datetime import date

import pytest
from PIL import Image, ImageFilter, ImageOps

from si_agent.photo import idcard, messages
from si_agent.photo.idcard import PortraitProblem, ReadProblem, read_id_card
from si_agent.testing import cards, faces

CARDS = [cards.random_card(random.Random(seed)) for seed in (3, 11, 29, 47)]
# One hand-made card: a Uyghur name with a middle dot and an X check character.
CARDS.append(cards.Card(name="买买提·艾力", sex="男", ethnicity="维吾尔",
                        birth=date(1985, 7, 9), address="新疆乌鲁木齐市天山区解放南路88号",
                        id_number=cards.id_number("650102", date(1985, 7, 9), 3)))


def expected(card: cards.Card) -> dict[str, str]:
    return {"name": card.name, "sex": card.sex, "ethnicity": card.ethnicity,
            "birth": card.birth.isoformat(), "address": card.address,
            "id_number": card.id_number}


def test_cards_are_varied() -> None:
    assert len({c.sex for c in CARDS}) == 2
    assert len({c.ethnicity for c in CARDS}) >= 3
    assert len({c.address[:3] for c in CARDS}) >= 3


@pytest.mark.parametrize("card", CARDS, ids=[c.name for c in CARDS])
def test_reads_every_field_exactly(card: cards.Card) -> None:
    reading = read_id_card(cards.encode(cards.portrait_photo(card)))
    assert reading.ok, reading.error
    assert reading.problem is None
    assert reading.fields() == expected(card)


def portrait_of(reading) -> Image.Image:
    assert reading.portrait is not None, reading.portrait_problem
    return Image.open(io.BytesIO(reading.portrait)).convert("RGB")


def holds_one_usable_face(portrait: Image.Image) -> float:
    """The face's roll in degrees (eye line), after the face step's own checks."""
    import numpy as np

    from si_agent.photo.face import QualityGate, one_face

    _, row, _ = one_face(np.asarray(portrait)[:, :, ::-1].copy(), QualityGate())
    (rx, ry), (lx, ly) = row[4:6], row[6:8]
    return math.degrees(math.atan2(ly - ry, lx - rx))


def test_keeps_the_portrait_as_png() -> None:
    reading = read_id_card(cards.encode(cards.portrait_photo(CARDS[0], faces.astronaut_head())))
    assert reading.ok and reading.portrait_problem is None
    assert Image.open(io.BytesIO(reading.portrait)).format == "PNG"
    portrait = portrait_of(reading)
    w, h = portrait.size
    assert 190 < w < 300 and 250 < h < 380  # about the card's 230 x 300 photo
    assert abs(holds_one_usable_face(portrait)) < 3
    assert "portrait=" not in repr(reading)  # the image bytes are never shown


# The card as phones photograph it: askew either way, on a white sheet or a dark
# frame (a border), or printed with other proportions; the photo is found by its face.
PHOTOGRAPHED = {
    "askew +8°": lambda img: img.rotate(8, Image.Resampling.BICUBIC, expand=True,
                                       fillcolor=(96, 78, 60)),
    "askew -8°": lambda img: img.rotate(-8, Image.Resampling.BICUBIC, expand=True,
                                       fillcolor=(96, 78, 60)),
    "white border": lambda img: ImageOps.expand(img, 120, fill=(250, 250, 250)),
    "black border": lambda img: ImageOps.expand(img, 60, fill=(10, 10, 10)),
    "wider card": lambda img: img.resize((round(img.width * 1.1), round(img.height * 0.95))),
    "taller card": lambda img: img.resize((round(img.width * 0.94), round(img.height * 1.08))),
}


@pytest.mark.parametrize("distortion", PHOTOGRAPHED, ids=list(PHOTOGRAPHED))
def test_the_portrait_is_found_by_its_face(distortion: str) -> None:
    card = CARDS[1]
    photo = PHOTOGRAPHED[distortion](cards.portrait_photo(card, faces.hopper_head()))
    reading = read_id_card(cards.encode(photo, "JPEG", quality=80))
    assert reading.ok, reading.error
    assert reading.id_number == card.id_number
    assert abs(holds_one_usable_face(portrait_of(reading))) < 4  # turned upright


def test_the_holders_own_face_beside_the_card_is_not_taken() -> None:
    """A citizen holding the card next to her face: the card's photo is Grace Hopper's."""
    import numpy as np

    from si_agent.photo.face import compare

    card = cards.portrait_photo(CARDS[2], faces.hopper_head())
    selfie = faces.astronaut().resize((460, 460))
    scene = Image.new("RGB", (card.width + selfie.width + 40, card.height), (120, 110, 100))
    scene.paste(selfie, (0, (card.height - selfie.height) // 2))
    scene.paste(card, (selfie.width + 40, 0))
    reading = read_id_card(cards.encode(scene, "JPEG", quality=85))
    assert reading.ok, reading.error
    portrait = np.asarray(portrait_of(reading))[:, :, ::-1].copy()
    assert compare(faces.jpeg(faces.hopper()), portrait).same_person
    assert not compare(faces.jpeg(faces.astronaut()), portrait).same_person


def test_a_card_without_a_face_is_read_but_has_no_portrait() -> None:
    reading = read_id_card(cards.encode(cards.portrait_photo(CARDS[0])))  # a drawn placeholder
    assert reading.ok and reading.fields() == expected(CARDS[0])
    assert reading.portrait is None
    assert reading.portrait_problem is PortraitProblem.NOT_FOUND
    assert reading.portrait_error == messages.PORTRAIT_NOT_FOUND


def test_rotated_blurred_jpeg_still_reads_name_and_number() -> None:
    card = CARDS[1]
    photo = cards.portrait_photo(card, faces.astronaut_head()).rotate(4, expand=True,
                                                                  fillcolor=(96, 78, 60))
    photo = photo.filter(ImageFilter.GaussianBlur(1.0))
    reading = read_id_card(cards.encode(photo, "JPEG", quality=50))
    assert reading.ok, reading.error
    assert (reading.name, reading.id_number) == (card.name, card.id_number)
    assert reading.portrait is not None


def test_back_side_asks_for_the_portrait_side() -> None:
    reading = read_id_card(cards.encode(cards.back_photo(CARDS[0]), "JPEG"))
    assert reading.problem is ReadProblem.BACK_SIDE
    assert reading.error == "这是身份证国徽面，请上传人像面。"
    assert reading.id_number is None and reading.portrait is None


def test_blank_image_finds_no_card() -> None:
    reading = read_id_card(cards.encode(Image.new("RGB", (1000, 700), (128, 120, 110))))
    assert reading.problem is ReadProblem.NO_CARD
    assert reading.error == "照片中没有识别到身份证，请拍摄身份证人像面，确保四角完整、文字清晰。"


def test_bytes_that_are_no_image_find_no_card() -> None:
    assert read_id_card(b"not an image").problem is ReadProblem.NO_CARD


def test_half_card_asks_for_the_whole_card() -> None:
    photo = cards.portrait_photo(CARDS[2])
    half = photo.crop((0, 0, photo.width, photo.height // 2))
    reading = read_id_card(cards.encode(half))
    assert reading.problem is ReadProblem.PARTIAL
    assert "没有识别到公民身份号码" in reading.error
    assert "请拍摄完整的身份证人像面" in reading.error
    assert "姓名" not in reading.error  # the name is on the top half


def test_glare_blob_asks_to_avoid_the_light() -> None:
    photo = cards.add_glare(cards.portrait_photo(CARDS[3]), center=(0.3, 0.45), radius=0.2)
    reading = read_id_card(cards.encode(photo, "JPEG"))
    assert reading.problem is ReadProblem.GLARE
    assert reading.error == "照片反光，请避开灯光重新拍摄。"
    assert reading.glare > idcard.GLARE_BLOB


def test_glare_on_the_portrait_alone_is_named() -> None:
    # Every field is readable, but the face step would get a washed-out photo.
    photo = cards.add_glare(cards.portrait_photo(CARDS[0], faces.astronaut_head()),
                            center=(0.73, 0.38), radius=0.12)
    reading = read_id_card(cards.encode(photo))
    assert reading.ok, reading.error
    assert reading.portrait is None
    assert reading.portrait_problem is PortraitProblem.GLARE
    assert reading.portrait_error == messages.GLARE


def test_a_clean_card_has_no_glare() -> None:
    assert read_id_card(cards.encode(cards.portrait_photo(CARDS[3]))).glare < idcard.GLARE_BLOB


def test_number_failing_the_checksum() -> None:
    reading = read_id_card(cards.encode(cards.portrait_photo(cards.with_bad_checksum(CARDS[0]))))
    assert reading.problem is ReadProblem.ID_INVALID
    assert reading.error == ("身份证号码校验位不正确。"
                             "请确认上传的是有效的居民身份证，并重新拍摄清晰的人像面。")


def test_printed_birth_date_disagreeing_with_the_number() -> None:
    card = replace(CARDS[1], birth=CARDS[1].birth.replace(day=1 if CARDS[1].birth.day > 1 else 2))
    reading = read_id_card(cards.encode(cards.portrait_photo(card)))
    assert reading.problem is ReadProblem.BIRTH_MISMATCH
    assert reading.error == messages.BIRTH_MISMATCH


def test_printed_sex_disagreeing_with_the_number() -> None:
    card = replace(CARDS[2], sex="女" if CARDS[2].sex == "男" else "男")
    reading = read_id_card(cards.encode(cards.portrait_photo(card)))
    assert reading.problem is ReadProblem.SEX_MISMATCH
    assert reading.error == messages.SEX_MISMATCH


def test_one_engine_shared_by_threads() -> None:
    photos = [cards.encode(cards.portrait_photo(card)) for card in CARDS[:2]]
    with ThreadPoolExecutor(2) as pool:
        readings = list(pool.map(read_id_card, photos))
    assert [r.id_number for r in readings] == [c.id_number for c in CARDS[:2]]
    assert idcard._ocr() is idcard._ocr()
