"""core.consult: the next move of a consultation is a pure function of its slots."""

from __future__ import annotations

from pathlib import Path

import pytest

from si_agent.config.loader import load_businesses
from si_agent.core import consult
from si_agent.session.model import FieldState

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def b():
    return load_businesses(ROOT / "businesses")["insurance_consult"]


def slots(**values) -> dict[str, FieldState]:
    return {k: FieldState(status="skipped") if v is None else FieldState(status="collected",
                                                                           value=v)
            for k, v in values.items()}


def test_nothing_known_asks_the_first_theme(b):
    assert consult.next_move(b, {}, None) == "请问您的年龄、职业和大概年收入区间？"


def test_a_theme_half_done_asks_only_what_it_misses(b):
    fields = slots(age=40)
    assert consult.next_move(b, fields, b.themes[0]) == "还得辛苦您补充一下：职业、年收入区间"


def test_a_completed_theme_is_summed_up_before_the_next_opening(b):
    fields = slots(age=40, occupation="教师", income_range="10-20万")
    assert consult.next_move(b, fields, b.themes[0]) == (
        "投保人基本信息：年龄40岁，职业教师，年收入10-20万。\n"
        "接下来了解一下您的家庭结构：您是家里的主要经济来源吗？有几个孩子？")


def test_a_later_theme_given_in_passing_asks_only_the_rest(b):
    fields = slots(age=40, occupation="教师", income_range="10-20万", children_count=2)
    move = consult.next_move(b, fields, b.themes[0])
    assert move.endswith("关于家庭结构，还想了解：是否家庭经济支柱")


def test_several_themes_completed_at_once_are_all_summed_up(b):
    fields = slots(age=40, occupation="教师", income_range=None, is_breadwinner="否",
                   children_count=0)
    assert consult.next_move(b, fields, b.themes[0]).splitlines() == [
        "投保人基本信息：年龄40岁，职业教师，年收入未提供。",
        "家庭结构：家庭经济支柱：否，子女数量：0个。",
        b.themes[2].opening]


def test_the_closing_lists_skipped_slots_and_the_recommendations_that_hold(b):
    fields = slots(age=55, occupation="会计", income_range="10万以下", is_breadwinner="是",
                   children_count=0, product_types=["医疗险", "年金险"],
                   coverage_expectation=500000.0, premium_budget=None,
                   existing_insurance="无", health_summary="健康，无异常", special_needs="无")
    assert consult.current_theme(b, fields) is None
    text = consult.next_move(b, fields, b.themes[5])
    assert "需求与偏好：关注医疗险、年金险，期望保额50万元，年保费预算未提供。" in text
    recommendation = consult.recommendation(b, fields)
    assert recommendation.startswith("您是家庭的主要经济来源")
    assert "年金险适合做长期储蓄" in recommendation and "50岁以上" in recommendation
    assert "家里有孩子" not in recommendation  # children_count > 0 does not hold
    assert text.endswith("请回复“转人工”。")


def test_without_a_matching_recommendation_the_default_is_given(b):
    fields = slots(age=30, is_breadwinner="否", children_count=0, product_types=["意外险"])
    assert consult.recommendation(b, fields) == b.consult.default_recommendation


def test_shown_values_carry_units_and_lists(b):
    assert consult.shown(b.field("age"), 40) == "40岁"
    assert consult.shown(b.field("coverage_expectation"), 1_500_000.0) == "150万元"
    assert consult.shown(b.field("premium_budget"), 3000.0) == "3000元"
    assert consult.shown(b.field("product_types"), ["重疾险", "寿险"]) == "重疾险、寿险"
    assert consult.shown(b.field("occupation"), None) == "未提供"


def test_the_profile_keeps_collected_and_skipped_slots_only(b):
    fields = {**slots(age=40, income_range=None),
              "occupation": FieldState(status="invalid", error="x")}
    assert set(consult.profile(b, fields)) == {"age", "income_range"}
