"""The correction, negation, hedge, filler and other-person cues (``engine.cues``)."""

from __future__ import annotations

import pytest

from si_agent.engine import cues


@pytest.mark.parametrize("text,value", [
    ("哎不对不对 还是改回张伟吧", "张伟"),
    ("改回张伟", "张伟"),
    ("李思是错的 应该是李四", "李四"),
    ("不对，是张伟", "张伟"),
    ("名字应该是张伟", "张伟"),
    ("刚才说错了，是张伟", "张伟"),
    ("手机号给错了，是13911112222", "13911112222"),
    ("电话改成13800001111", "13800001111"),
    ("不不，选农行", "农行"),
    ("不是，是张伟", "张伟"),
    ("就医城市应该是南京，我说错了", "南京"),  # an apology after the value
])
def test_the_value_after_a_correction_frame(text, value):
    assert cues.is_correction(text)
    assert cues.corrected_value(text) == value


@pytest.mark.parametrize("text", ["哦不对", "不对不对", "刘阳是错的", "南京，我说错了"])
def test_a_frame_without_a_new_value_gives_none(text):
    """Nothing after the frame, or only the old value before it: no value to store."""
    assert cues.is_correction(text)
    assert cues.corrected_value(text) is None


@pytest.mark.parametrize("text", ["不是，没孩子", "不对外开放的小区", "张伟", "信息无误"])
def test_no_correction_frame(text):
    assert not cues.is_correction(text)


def test_the_words_before_the_frame_name_what_is_corrected():
    assert cues.before_frame("名字应该是张伟") == "名字"
    assert cues.before_frame("刘阳是错的 应该是刘洋") == "刘阳"


@pytest.mark.parametrize("text,word,negated", [
    ("不是临时的", "临时", True),
    ("不要最低档，按100%来", "最低档", True),
    ("我可不是什么顶梁柱", "顶梁柱", True),
    ("哦不对", "对", True),
    ("工行离我家太远不方便，还是建行吧", "工行", True),
    ("寿险先不考虑，要重疾", "寿险", True),
    ("工行离我家太远不方便，还是建行吧", "建行", False),
    ("不是旅游哈，是探亲", "探亲", False),  # another clause
    ("参保地不是杭州是上海", "上海", False),
    ("收入不到10万", "10万", False),  # "less than", no negation
    ("不去杭州了，去南京", "杭州", True),
    ("杭州不去了，改去南京", "杭州", True),
    ("不去杭州了，去南京", "南京", False),
])
def test_negation_scope(text, word, negated):
    at = text.index(word)
    assert cues.negated(text, at, at + len(word)) is negated


def test_a_first_person_phrase_before_someone_else_is_possessive():
    text = "家里靠我老公"
    assert cues.possessive(text, text.index("靠我") + 2)
    assert not cues.possessive("家里靠我", 4)


@pytest.mark.parametrize("text,other", [
    ("家里主要是我先生挣钱", True), ("家里靠我老公", True), ("主要靠老婆", True),
    ("我老婆在上班赚钱", True), ("我是家里的顶梁柱", False), ("我们有一个女儿", False),
])
def test_someone_else_as_the_subject(text, other):
    assert cues.other_subject(text) is other


@pytest.mark.parametrize("clause,filler", [
    ("哦对了", True), ("对了", True), ("对了对了", True), ("对的", False), ("对", False),
])
def test_a_filler_clause(clause, filler):
    assert cues.is_filler(clause) is filler


def test_fillers_are_blanked_in_place():
    assert cues.strip_fillers("哦对了，重疾险有啥区别") == "   ，重疾险有啥区别"
    assert cues.strip_fillers("你说对了") == "你说对了"


@pytest.mark.parametrize("text,touched", [
    ("还是改回张伟吧", True), ("说不好算不算", True), ("哦对了，还有个问题", True),
    ("家里主要是我先生挣钱", True), ("张伟", False), ("不是，没孩子", False),
    ("35岁，年收入15万", False),
])
def test_touched(text, touched):
    assert cues.touched(text) is touched


@pytest.mark.parametrize("text,dropped", [
    ("年龄说错了，应该是36", "年龄，36"), ("不对，是36岁", "36岁"), ("保额还是改成100万吧", "保额还是100万吧"),
    ("是的，有一个女儿", "是的，有一个女儿"),
])
def test_drop_frames(text, dropped):
    assert cues.drop_frames(text) == dropped


@pytest.mark.parametrize("text,end,goes_on", [
    ("我是做设计的", 2, True), ("对我来说", 1, True), ("是的", 1, False), ("对啊", 1, False),
    ("是我", 2, False),
])
def test_a_short_word_that_goes_on(text, end, goes_on):
    assert cues.continues(text, end) is goes_on


@pytest.mark.parametrize("text,parts", [
    ("不是张伟，是张炜", ("", "张伟", "张炜")),
    ("参保地不是杭州是上海", ("参保地", "杭州", "上海")),
    ("不是苏州，是无锡吧", ("", "苏州", "无锡")),
    ("不是，没孩子", None),
    ("李四不是李思", None),
])
def test_not_but(text, parts):
    assert cues.not_but(text) == parts


def test_an_exclusion_and_a_not_with_a_few_words_between_negate():
    from si_agent.engine.cues import negated

    text = "除了工行都行"
    assert negated(text, text.index("工行"), text.index("工行") + 2)
    text = "我不是家里的顶梁柱"
    assert negated(text, text.index("顶梁柱"), text.index("顶梁柱") + 3)
    text = "我是家里的顶梁柱"
    assert not negated(text, text.index("顶梁柱"), text.index("顶梁柱") + 3)
