"""Long numbers said digit by digit (``validators/spoken.py``): voice input writes an
ID, phone, bank card or application number as single Chinese digits."""

from __future__ import annotations

import pytest

from si_agent.validators import check, extract, messages
from si_agent.validators.identifiers import identifier_spans
from si_agent.validators.spoken import read

ID = "330102199503080133"
APPLICATION = r"^SI\d{14}$"


@pytest.mark.parametrize(
    ("spoken", "digits"),
    [
        ("三三零一零二一九九五零三零八零一三三", ID),  # 零 for 0
        ("三三〇一〇二一九九五〇三〇八〇一三三", ID),  # 〇 for 0
        ("三三洞幺洞二幺九九五洞三洞八洞幺三三", ID),  # radio forms 洞 and 幺
        ("三三零 一零二 嗯 一九九五 零三零八 零一三三", ID),  # groups and a filler
        ("三三零-一零二-一九九五-零三零八-零一三三", ID),
        ("三三零一零六一九九零零一零一一二三叉", "33010619900101123X"),  # the last 叉 is X
        ("3301０２一九九五0308零一三三", ID),  # Arabic, full-width and spoken mixed
        ("三三零一零二 那个 一九九五零三零八 嗯 零一三三", ID),  # 那个 between groups
        ("三三零一零二 一九九五年三月八号 零一三三", ID),  # the birth date read as a date
        ("三三零一零六一九九零零一零一一二三 大写的X", "33010619900101123X"),
    ],
)
def test_spoken_id_numbers_are_read(spoken: str, digits: str) -> None:
    assert check("idcard", spoken).value == digits
    found = extract("idcard", f"我的身份证号是 {spoken}，麻烦了")
    assert [(f.value, f.raw) for f in found] == [(digits, spoken)]


def test_a_digit_said_twice_is_read_twice_next_to_digits_only() -> None:
    assert check("idcard", "三七零二零二 一九六零一零零一 两个八 幺六").value == "370202196010018816"
    assert check("phone", "幺三八 两个零 幺三 八零零三").value == "13800138003"
    assert read("我有两个八岁的孩子").text == "我有两个八岁的孩子"  # no digits around: words
    assert read("他2000年1月10号生的").text == "他2000年1月10号生的"  # a date alone stays


def test_a_wrong_check_digit_said_aloud_gets_the_id_diagnosis() -> None:
    result = check("idcard", "三三零一零二一九九五零三零八零一三四")
    assert result.error == messages.IDCARD_CHECKSUM
    assert check("idcard", "三三零一").error == messages.IDCARD_LENGTH.format(n=4)


def test_spoken_phone_and_bank_card() -> None:
    assert check("phone", "幺三九 五七七七 幺二三四").value == "13957771234"
    assert [f.value for f in extract("phone", "新号码是一三八零零一三八零零三")] == ["13800138003"]
    card = "六零一三八二零八零零零一二三四五六七二"
    assert [f.value for f in extract("bank_card", f"卡号 {card}")] == ["6013820800012345672"]
    assert check("bank_card", card).value == "6013820800012345672"


def test_two_spoken_numbers_apart_stay_two_numbers() -> None:
    text = "三三零一零二一九九五零三零八零一三三 幺三八零零幺三八零零四"
    assert [f.value for f in extract("idcard", text)] == [ID]
    assert [f.value for f in extract("phone", text)] == ["13800138004"]
    assert len(identifier_spans(text)) == 2  # so no year or amount is read inside them


@pytest.mark.parametrize(("spoken", "read_as"), [
    # Every digit apart, as some voice input writes them: the ID ends where a valid ID does.
    (" ".join("三三零一零二一九九五零三零八零一三三幺三八零零幺三八零零四"), f"{ID} 13800138004"),
    (" ".join("六零一三八二零八零零零一二三四五六七二幺三八零零幺三八零零四"),
     "6013820800012345672 13800138004"),  # a 19-digit card, then a phone
    ("三三零一零二一九九五零三零八零一三四 三三零一零二一九九五零三零八零一三三",
     "330102199503080134 " + ID),  # a wrong number said, then the right one
])
def test_numbers_said_one_after_the_other_stay_apart(spoken, read_as):
    assert read(spoken).text == read_as


def test_application_numbers_with_spoken_digits_and_spaced_letters() -> None:
    for said in ("SI二零二六零九一五零零零零零一", "S I 二零二六零九一五零零零零零一"):
        assert check("text", said, pattern=APPLICATION).value == "SI20260915000001"
    assert check("text", "SI二零二六", pattern=APPLICATION).error == messages.TEXT_PATTERN


@pytest.mark.parametrize(
    "prose",
    ["一个月也就六千来块", "一家三口", "十二万三", "二零二五年六月三十日", "交了一二十年",
     "一二三四五六七十", "零点八"],
)
def test_chinese_numerals_in_prose_are_not_read_as_digits(prose: str) -> None:
    assert read(prose).text == prose


def test_short_runs_are_left_alone_in_a_sentence() -> None:
    assert read("三三零一零二").text == "三三零一零二"  # under seven digits: words, not a number
    assert read("三三零一零二", min_run=1).text == "330102"  # a whole answer is read


def test_spans_of_a_reading_point_into_the_text() -> None:
    text = "身份证 三三零 嗯 一零二一九九五零三零八零一三三 谢谢"
    reading = read(text)
    assert reading.text == f"身份证 {ID} 谢谢"
    start = reading.text.index(ID)
    assert reading.span(start, start + len(ID)) == (4, text.index(" 谢谢"))


def test_spoken_years_without_nian() -> None:
    assert [f.value for f in extract("year", "二零一九到二零二一")] == [2019, 2021]
    assert check("year", "一九九八").value == 1998
    assert extract("year", "三三零一零二一九九五零三零八零一三三") == []  # inside an ID


def test_groups_apart_with_commas_as_voice_input_writes_them():
    found = extract("idcard", "我的身份证是三三零一零二，一九九五零三零八，零一三三，你记一下")
    assert [f.value for f in found] == ["330102199503080133"]
