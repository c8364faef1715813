"""Extraction from sentences that mix several types, and properties of extract."""

from __future__ import annotations

import string

from hypothesis import example, given, settings
from hypothesis import strategies as st
from validators_support import TODAY, luhn_complete, make_id

from si_agent.validators import TYPES, check, extract

OPTIONS = {
    "options": [("临时挂失", ("临挂",)), ("正式挂失", ())],
    "buckets": [("10万以下", 100_000), ("10-20万", 200_000), ("20万以上", None)],
    "pattern": r"[A-Z]\d{3}",
    "today": TODAY,
}


def values(type_, text, **options):
    return [f.value for f in extract(type_, text, **{**OPTIONS, **options})]


def test_id_and_spaced_phone():
    number = make_id("330106", "19900101", "123")
    text = f"我的身份证号是{number}，手机 138 1234 5678"
    assert values("idcard", text) == [number]
    assert values("phone", text) == ["13812345678"]
    assert values("bank_card", text) == []
    assert values("year", text) == []
    assert values("date", text) == []
    assert values("integer", text) == []


def test_a_whole_application_in_one_message():
    number = make_id("420106", "19650315", "042")
    card = luhn_complete("621700123456789012")
    text = (f"我叫张三，身份证{number}，电话13987654321，今年60岁，从杭州转到武汉，"
            f"2019年3月1日开始交，交了25年，工资卡{card}，要办临时挂失，编号B204")
    assert values("name", text) == ["张三"]
    assert values("idcard", text) == [number]
    assert values("phone", text) == ["13987654321"]
    assert values("bank_card", text) == [card]
    assert values("city", text) == ["杭州市", "武汉市"]
    assert values("date", text) == ["2019-03-01"]
    assert values("year", text) == [2025, 2019]
    # The digits of a full date are not quantities, nor is the 204 of "B204".
    assert values("integer", text) == [60, 25]
    assert values("enum", text) == ["临时挂失"]
    assert values("text", text) == ["B204"]


def test_extracted_raw_checks_to_the_same_value():
    number = make_id("510104", "19881111", "999")
    text = (f"本人王五，身份证：{number}，手机+86 158-0000-1111，"
            "去年12月退休，2024/12/31办的，基数一万二，成都")
    for type_ in TYPES:
        for f in extract(type_, text, **OPTIONS):
            assert text[f.start:f.end] == f.raw
            assert check(type_, f.raw, **OPTIONS).value == f.value, (type_, f)


_pieces = st.one_of(
    st.text(alphabet="我的是叫号码，。 年月日岁元万一二三十", max_size=6),
    st.text(alphabet=string.digits + " -", min_size=1, max_size=22),
    st.sampled_from(["杭州", "浙江省杭州市", "临挂", "张三", "今天", "2019年", "138 1234 5678",
                     "+86", "X", "x", "·", "Ａ１２３", "二〇二四年三月五日"]),
    st.builds(lambda s: make_id(birth=f"19{s % 100:02d}0101", seq=f"{s % 1000:03d}"),
              st.integers(0, 10**6)),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_pieces, max_size=8).map("".join))
@example("X00-0二〇二四年三月五日")  # the reading of the sentence joined "X00-0" into X000
def test_extract_properties_on_random_sentences(text):
    for type_ in TYPES:
        found = extract(type_, text, **OPTIONS)
        for f in found:
            assert 0 <= f.start < f.end <= len(text)
            assert text[f.start:f.end] == f.raw
            if type_ == "date" and f.value is None:
                # A span ("去年年底") is found so that its check asks for the exact day.
                assert check(type_, f.raw, **OPTIONS).error, (type_, f)
                continue
            assert check(type_, f.raw, **OPTIONS).ok, (type_, f)
        for a, b in zip(found, found[1:], strict=False):
            assert a.end <= b.start, (type_, found)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=30))
def test_check_never_raises(raw):
    for type_ in TYPES:
        result = check(type_, raw, **OPTIONS)
        assert result.ok or (result.error and result.error.endswith("。"))
