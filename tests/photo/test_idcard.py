"""The ID-card reader on synthetic cards, with the real OCR engine."""

from __future__ import annotations

import io
import random
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from datetime import date

import pytest
from PIL import Image, ImageFilter

from si_agent.photo import idcard, messages
from si_agent.photo.idcard import ReadProblem, read_id_card
from si_agent.testing import cards

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


def test_keeps_the_portrait_as_png() -> None:
    reading = read_id_card(cards.encode(cards.portrait_photo(CARDS[0])))
    portrait = Image.open(io.BytesIO(reading.portrait)).convert("RGB")
    assert portrait.format is None or portrait.mode == "RGB"
    w, h = portrait.size
    assert 200 < w < 320 and 270 < h < 400  # the 230 x 300 photo with a small margin
    # The placeholder's grey background, not the card's light ground, fills the top corners.
    r, g, b = portrait.getpixel((w // 2, h // 8))
    assert 150 < r < 190 and b > r
    assert "portrait" not in repr(reading)


def test_rotated_blurred_jpeg_still_reads_name_and_number() -> None:
    card = CARDS[1]
    photo = cards.portrait_photo(card).rotate(4, expand=True, fillcolor=(96, 78, 60))
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


def test_glare_on_the_portrait_alone_asks_to_avoid_the_light() -> None:
    # Every field is readable, but the face step would get a washed-out photo.
    photo = cards.add_glare(cards.portrait_photo(CARDS[0]), center=(0.75, 0.41), radius=0.12)
    reading = read_id_card(cards.encode(photo))
    assert reading.problem is ReadProblem.GLARE
    assert reading.portrait is None


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
