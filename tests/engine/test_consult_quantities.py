"""Consultation slots read offline: numbers by what their unit measures
(``engine/quantities.py``) and product aliases in scope (``engine/consult.py``)."""

from __future__ import annotations

import pytest

from si_agent.core.state import FieldStatus
from si_agent.engine.consult import asks_for_consultation, extract_slots
from si_agent.engine.quantities import (
    Quantity,
    is_per_period,
    may_measure,
    measured,
    slot_measures,
)
from si_agent.session.model import FieldState


@pytest.fixture(scope="module")
def consult(catalog):
    return catalog["insurance_consult"]


def _at(consult, theme: int) -> dict[str, FieldState]:
    """Fields with every theme before ``theme`` answered."""
    values = {"age": 40, "occupation": "教师", "income_range": "10-20万", "is_breadwinner": "是",
              "children_count": 1, "product_types": ["重疾险"], "coverage_expectation": 500000,
              "premium_budget": 5000, "existing_insurance": "无", "health_summary": "健康"}
    keys = [s.key for t in consult.themes[:theme] for s in t.slots]
    return {k: FieldState(status=FieldStatus.COLLECTED, value=values[k]) for k in keys}


@pytest.mark.parametrize(("text", "number", "quantity"), [
    ("一个月也就七千来块", "一", Quantity.DURATION),  # 个月 is not 个
    ("一个月也就七千来块", "七千", Quantity.MONEY),
    ("一年二十多万", "二十", Quantity.MONEY),  # 多万: the unit after a rough number
    ("一年二十多万", "一", Quantity.DURATION),
    ("40多岁", "40", Quantity.AGE),
    ("两个娃", "两", Quantity.COUNT),
    ("一家三口", "三", Quantity.PEOPLE),  # a household, not three children
    ("一个人养活全家", "一", Quantity.PEOPLE),
    ("干了三年", "三", Quantity.DURATION),
    ("十二万三", "十二万三", Quantity.MONEY),  # 万 inside the number
    ("指数零点八", "零点八", None),
])
def test_what_a_number_measures(text, number, quantity):
    start = text.index(number)
    assert measured(text, start, start + len(number)) is quantity


def test_what_a_slot_measures(consult):
    f = consult.field
    assert slot_measures(f("age")) is Quantity.AGE
    assert slot_measures(f("children_count")) is Quantity.COUNT
    assert slot_measures(f("income_range")) is Quantity.MONEY
    assert slot_measures(f("premium_budget")) is Quantity.MONEY
    assert not may_measure(f("children_count"), Quantity.DURATION)
    assert may_measure(f("children_count"), None)


@pytest.mark.parametrize(("text", "expected"), [
    ("今年42，开出租的，一个月也就七千来块", {"age": "42", "income_range": "一个月也就七千来块"}),
    ("44岁 做装修的 一年二十多万", {"age": "44岁", "income_range": "一年二十多万"}),
    ("35岁，一个人养活一家三口", {"age": "35岁"}),  # one person, a family of three
])
def test_first_theme_numbers_go_where_their_units_point(consult, text, expected):
    values = extract_slots(consult, {}, text).values
    assert {k: v for k, v in values.items() if k in expected} == expected
    assert "children_count" not in values


@pytest.mark.parametrize(("text", "products"), [
    ("主要想看看医疗和意外", "医疗险、意外险"),
    ("重疾、定寿", "重疾险、寿险"),
    ("大病的和住院报销的", "重疾险、医疗险"),
    ("防癌的那种就行", "重疾险"),
    ("教育金", "年金险"),
    ("除了年金都要", "重疾险、寿险、意外险、医疗险"),
])
def test_product_aliases_when_products_are_asked(consult, text, products):
    values = extract_slots(consult, _at(consult, 2), text).values
    assert values.get("product_types") == products
    assert "health_summary" not in values  # "住院" inside "住院报销" is no health cue


def test_a_short_product_alias_inside_an_occupation_is_no_choice(consult):
    values = extract_slots(consult, {}, "35岁，做医疗器械销售的，年收入二十万").values
    assert "product_types" not in values
    assert values["occupation"] == "做医疗器械销售的"
    chosen = extract_slots(consult, {}, "35岁，想看看医疗").values
    assert chosen["product_types"] == "医疗险"  # a word that chooses, in another theme


def test_what_suits_me_asks_for_the_consultation():
    assert asks_for_consultation("买哪种保险合适啊", request=False)
    assert not asks_for_consultation("给孩子买什么保险好", request=False)


@pytest.mark.parametrize(("text", "number", "per"), [
    ("一个月八千五", "一", True),
    ("九千二百块一个月", "一", True),
    ("一年交三千多", "一", True),
    ("一年", "一", False),  # alone: one year
    ("交了二十五年，一个月", "一", False),  # another clause's number
    ("两个月八千", "两", False),  # two months are a duration
])
def test_one_period_next_to_an_amount_is_a_rate(text, number, per):
    start = text.index(number)
    assert is_per_period(text, start, start + len(number)) is per

