"""Phrasings of the fourth blind corpus's classes (tests/dialogues_blind4), read by the
rules: Traditional characters, dialect cancels and requests for a person, the services
asked in regional words, options turned down in dialect, grown-ups counted apart from
children, monthly amounts for a yearly slot, months for a field counted in years, and
questions about what the awaited field holds."""

from __future__ import annotations

import pytest

from si_agent.core.state import FieldStatus
from si_agent.engine import cues
from si_agent.engine import lexicon as L
from si_agent.engine.consult import extract_slots
from si_agent.engine.quantities import months_as_years
from si_agent.engine.rules.questions import asks_what_field_holds
from si_agent.engine.rules.services import asks_for_services
from si_agent.session.model import FieldState


def test_traditional_is_read_in_simplified():
    assert L.simplified("養老金少發了兩百塊 我要投訴你們") == "养老金少发了两百块 我要投诉你们"
    assert L.simplified("张伟 文三路100号") == "张伟 文三路100号"


@pytest.mark.parametrize(("text", "cancel"), [
    ("不整了", True),
    ("拉倒吧 卡没带 下回再整", True),
    ("余额我要上app看看 今朝先不算了", True),
    ("噉算啦 唔申请喇", True),
    ("意外就拉倒吧", False),  # one choice turned down, not the business
    ("重疾跟寿险整上", False),
    ("我算了一下", False),
])
def test_dialect_cancels(text, cancel):
    assert L.is_cancel(text) is cancel


@pytest.mark.parametrize(("text", "kind"), [
    ("阿拉眼睛不灵了 弄不来 侬帮我寻个客服打电话给我好伐", "handoff"),
    ("麻烦帮我找个人工 我看不懂这些", "handoff"),
    ("帮我寄到公司客服部那边 文三路100号", None),
])
def test_a_person_asked_for_at_any_length(text, kind):
    assert L.small_talk(L.simplified(text)) == kind


@pytest.mark.parametrize(("text", "asks"), [
    ("老铁 你这嘎达都能整啥业务", True),
    ("請問你哋可以幫我辦啲咩嘢", True),
    ("嗯那个你们这个除了算这个还有啥别的功能没有", True),
    ("社保卡有哪些功能", False),
    ("电子社保卡能做什么", False),
])
def test_services_asked_in_regional_words(text, asks):
    assert asks_for_services(L.simplified(text)) is asks


def test_an_option_turned_down_in_dialect():
    assert cues.negated("重疾跟寿险整上 意外就拉倒吧", 9, 11)
    assert not cues.negated("重疾跟寿险整上 意外就拉倒吧", 0, 2)


@pytest.fixture(scope="module")
def consult(catalog):
    return catalog["insurance_consult"]


def _at(consult, theme: int) -> dict[str, FieldState]:
    values = {"age": 40, "occupation": "教师", "income_range": "10-20万", "is_breadwinner": "是",
              "children_count": 1}
    keys = [s.key for t in consult.themes[:theme] for s in t.slots]
    return {k: FieldState(status=FieldStatus.COLLECTED, value=values[k]) for k in keys}


def test_grown_ups_are_no_children(consult):
    values = extract_slots(consult, _at(consult, 1), "主要靠我 上头两个老人 下头一个上初中的娃").values
    assert values.get("children_count") == "一个"


@pytest.mark.parametrize(("text", "budget"), [
    ("重疾险 保额要一百万 保费一个月两百以内", "2400"),
    ("重疾险 保额一百万 每月交三百", "3600"),
    ("重疾险 保额一百万 一年顶多四千", "四千"),
])
def test_a_monthly_premium_for_the_yearly_budget(consult, text, budget):
    assert extract_slots(consult, _at(consult, 2), text).values.get("premium_budget") == budget


def test_months_for_a_field_counted_in_years(catalog):
    estimate = catalog["pension_estimate"]
    years = estimate.field("contribution_years")
    assert months_as_years(years, "两百四十个月") == "20"
    assert months_as_years(years, "250个月") == "20"  # whole years
    assert months_as_years(years, "二十年") is None
    assert months_as_years(estimate.field("retire_age"), "两百四十个月") is None


@pytest.mark.parametrize(("business", "key", "text", "asks"), [
    ("pension_estimate", "retire_age", "我是女的 在厂里上班 到底多少岁能退啊", True),
    ("unemployment_benefit", "separation_date", "是写最后上班那天还是合同上那天啊", True),
    ("flexible_employment", "contribution_grade", "呢个档次之后仲可唔可以改㗎", True),
    ("pension_estimate", "retire_age", "退休以后每个月能领多少", False),
    ("unemployment_benefit", "separation_date", "失业金多久到账", False),
])
def test_a_question_about_what_the_field_holds(catalog, business, key, text, asks):
    field = catalog[business].field(key)
    assert asks_what_field_holds(field, L.simplified(text)) is asks
