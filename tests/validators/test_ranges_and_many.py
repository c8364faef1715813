"""bucket (an amount read into a range) and multi_enum (several options) fields."""

from __future__ import annotations

import pytest

from si_agent.validators import check, extract

BUCKETS = [("10万以下", 100_000), ("10-20万", 200_000), ("20-50万", 500_000), ("50万以上", None)]
PRODUCTS = [("重疾险", ("重疾", "大病险")), ("寿险", ("定期寿险",)), ("意外险", ("意外",)),
            ("医疗险", ("百万医疗", "住院险")), ("年金险", ("养老年金",))]


@pytest.mark.parametrize("said,bucket", [
    ("10万元不到", "10万以下"), ("不到十万", "10万以下"), ("八万", "10万以下"),
    ("10万", "10-20万"), ("年薪15万", "10-20万"), ("十五万左右", "10-20万"),
    ("月薪8000", "10万以下"), ("月薪两万", "20-50万"), ("15到25万", "20-50万"),
    ("20万以下", "10-20万"), ("五十万以上", "50万以上"), ("120万", "50万以上"),
    ("10-20万", "10-20万"), ("50万以上", "50万以上"), ("9000元", "10万以下"),
    ("月薪8000到1万", "10-20万"),  # 8000 is in yuan: (8000 + 10000) / 2 × 12
    ("5到8万", "10万以下"),
])
def test_an_amount_falls_in_its_range(said, bucket):
    assert check("bucket", said, buckets=BUCKETS).value == bucket


@pytest.mark.parametrize("said", ["收入15", "不告诉你", "很多", "0-一"])  # a span with no unit
def test_no_amount_is_a_chinese_diagnosis_listing_the_ranges(said):
    result = check("bucket", said, buckets=BUCKETS)
    assert not result.ok
    assert result.error.endswith("10万以下、10-20万、20-50万、50万以上。")


def test_amounts_in_a_sentence_keep_their_hedges():
    found = extract("bucket", "我40岁，年收入不到10万，两个孩子", buckets=BUCKETS)
    assert [(f.value, f.raw) for f in found] == [("10万以下", "不到10万")]
    assert check("bucket", found[0].raw, buckets=BUCKETS).value == "10万以下"


@pytest.mark.parametrize("said,chosen", [
    ("重疾和百万医疗都想看看", ["重疾险", "医疗险"]),
    ("意外险", ["意外险"]),
    ("养老年金和定期寿险吧", ["寿险", "年金险"]),
    ("重疾险、寿险、意外险、医疗险、年金险", ["重疾险", "寿险", "意外险", "医疗险", "年金险"]),
])
def test_several_options_in_option_order(said, chosen):
    assert check("multi_enum", said, options=PRODUCTS).value == chosen


def test_no_option_lists_them():
    result = check("multi_enum", "理财", options=PRODUCTS)
    assert not result.ok and "重疾险、寿险、意外险、医疗险、年金险" in result.error


@pytest.mark.parametrize(("text", "bucket", "raw"), [
    ("一个月也就九千", "10-20万", "一个月也就九千"),  # a word of how much between
    ("每月能挣一万二", "10-20万", "每月能挣一万二"),
    ("九千二百块一个月", "10-20万", "九千二百块一个月"),  # the month after the amount
    ("一个月也就七千来块", "10万以下", "一个月也就七千"),
])
def test_monthly_amounts_said_around_the_month(text, bucket, raw):
    buckets = [("10万以下", 100000), ("10-20万", 200000), ("20-50万", 500000), ("50万以上", None)]
    assert check("bucket", text, buckets=buckets).value == bucket
    assert [(f.value, f.raw) for f in extract("bucket", text, buckets=buckets)] == [(bucket, raw)]
