"""Integers and numbers."""

from __future__ import annotations

import pytest
from validators_support import make_id

from si_agent.validators import check, extract


@pytest.mark.parametrize("raw,value", [
    ("60", 60), ("12,000", 12000), ("1,234,567", 1234567), ("1.2万", 12000),
    ("3千", 3000), ("5k", 5000), ("2w", 20000), ("三十五", 35), ("十万", 100000),
    ("两千五百", 2500), ("一百二十", 120), ("三千五", 3500), ("1万5", 15000),
    ("60岁", 60), ("25年", 25), ("3个月", 3), ("5000元", 5000), ("800块钱", 800),
    ("大约5000块", 5000), ("一共十二个月", 12), ("-5", -5), ("０", 0), ("零", 0),
])
def test_integer_forms(raw, value):
    result = check("integer", raw)
    assert result.ok, result.error
    assert result.value == value and type(result.value) is int


@pytest.mark.parametrize("raw,value", [
    ("0.6", 0.6), ("3", 3.0), ("1.25万", 12500.0), ("三点五", 3.5), ("12,345.67", 12345.67),
])
def test_number_is_always_a_float(raw, value):
    result = check("number", raw)
    assert result.value == value and type(result.value) is float


def test_integer_refuses_a_fraction():
    assert check("integer", "3.5").error == "这里应为整数，不能有小数。"
    assert check("integer", "3.0").value == 3


@pytest.mark.parametrize("raw", ["abc", "五六", "一两", "很多", "1,23", "3..5", "万"])
def test_unreadable(raw):
    assert check("integer", raw).error == "无法识别这个数字。"
    assert check("number", raw).error == "无法识别这个数字。"


def test_bounds_are_inclusive_and_named():
    assert check("number", "0.5", min=0.6, max=3).error == "数值应在0.6到3之间。"
    assert check("number", "3.1", min=0.6, max=3).error == "数值应在0.6到3之间。"
    assert check("number", "0.6", min=0.6, max=3).ok
    assert check("number", "3", min=0.6, max=3.0).ok
    assert check("integer", "15", min=16.0).error == "数值不能小于16。"
    assert check("integer", "71", max=70.0).error == "数值不能大于70。"


def test_extract_from_a_sentence():
    found = extract("integer", "我60岁退休，交了25年")
    assert [(f.value, f.start, f.end, f.raw) for f in found] == [
        (60, 1, 3, "60"), (25, 9, 11, "25"),
    ]


def test_extract_chinese_numerals_with_units():
    found = extract("integer", "今年五十五岁，交了二十五年，每月1.2万，还有一个月")
    assert [(f.value, f.raw) for f in found] == [
        (55, "五十五"), (25, "二十五"), (12000, "1.2万"), (1, "一"),
    ]


def test_extract_ignores_words_that_contain_numerals():
    assert extract("integer", "统一办理一下，万一不行，千万别急，一直等") == []


def test_extract_skips_identifiers_and_dates():
    text = f"身份证{make_id()}，手机138 1234 5678，2024-03-05，交了15年"
    assert [f.value for f in extract("integer", text)] == [15]


def test_extract_applies_bounds_and_integrality():
    text = "年龄60，基数3.5万，比例0.8"
    assert [f.value for f in extract("number", text)] == [60.0, 35000.0, 0.8]
    assert [f.value for f in extract("number", text, min=0.6, max=3)] == [0.8]
    assert [f.value for f in extract("integer", text)] == [60, 35000]


def test_full_width_comma_separates_clauses():
    assert [f.value for f in extract("integer", "300，200")] == [300, 200]
    assert [f.value for f in extract("integer", "工资12,000元")] == [12000]


@pytest.mark.parametrize(("text", "value", "raw"), [
    ("账户里有二十多万", 250000.0, "二十多万"),  # never the 20 before 多
    ("十几万吧", 150000.0, "十几万"),
    ("三十来万", 300000.0, "三十来万"),
    ("每年三四千", 3500.0, "三四千"),
    ("七八万", 75000.0, "七八万"),
    ("二三十万", 250000.0, "二三十万"),
    ("账户里一百二十多万", 1200000.0, "一百二十多万"),  # the numeral times its multiplier
    ("三百多万", 3000000.0, "三百多万"),
])
def test_rough_amounts_are_read_as_their_middle(text, value, raw):
    assert [(f.value, f.raw) for f in extract("number", text)] == [(value, raw)]
    assert check("number", raw).value == value


def test_digits_that_are_no_rough_amount_stay_unread():
    assert extract("number", "三五万") == []  # not neighbours: no reading
    assert check("number", "五六").error  # digits one by one, no multiplier


@pytest.mark.parametrize(("raw", "unit"), [
    ("12百万像素", "像素"), ("30公斤", "公斤"), ("90平米", "平米"), ("1.5米", "米"),
    ("2GB", "GB"), ("5000m", "m"), ("三十公斤", "公斤"), ("8000多平方米", "平方米"),
])
def test_a_unit_of_something_else_is_no_value(raw, unit):
    """"12百万像素" is neither 1200 nor twelve million yuan (the outsider's report)."""
    for type_ in ("number", "integer"):
        assert check(type_, raw).error == f"这里要的不是以“{unit}”为单位的数。"
        assert extract(type_, raw) == []
    assert [f.value for f in extract("number", "我月薪8000，房子90平米")] == [8000.0]


@pytest.mark.parametrize(("text", "value"), [
    ("3百万", 3_000_000.0), ("12百万", 12_000_000.0), ("1千万", 10_000_000.0),
    ("8000元", 8000.0), ("5k", 5000.0), ("1万5千", 15000.0),
])
def test_hundred_and_thousand_ten_thousands(text, value):
    assert check("number", text).value == value
    assert [f.value for f in extract("number", text)] == [value]


@pytest.mark.parametrize("text", ["12GB", "5000m", "300ml", "1.55m"])
def test_no_shorter_number_before_letters(text):
    """"5000m" is no 500 (the digits are never cut to leave a letter after a digit)."""
    assert extract("number", text) == []
    assert extract("integer", text) == []
