"""The rule engine's word lists: one table of (message, expected) per recogniser.

Cases marked ``bug`` are what a careful reader of Chinese expects but the
lexicon does not do yet; they are strict xfails, so they fail loudly once fixed.
"""

from __future__ import annotations

import pytest

from si_agent.engine import lexicon as L


@pytest.mark.parametrize("text,expected", [
    ("取消", True),
    ("算了吧", True),
    ("先不挂失了", True),   # for now, but still a stop
    ("这卡我不办了", True),
    ("不用了，谢谢", True),
    ("我算了一下，退休年龄是60岁", False),
    ("不取消", False),
    ("别取消，继续办", False),
    ("旧社保卡不要了，帮我挂失", False),
    ("我要退出", True),
    ("我想取消", True),
    ("我不办社保卡了", True),
    ("不要办理了", True),
    # Stops said one after another, and stops of other verbs (issue 25).
    ("算了不转了", True),
    ("算了那不领了", True),
    ("那不办了", True),
    ("不办了不办了", True),
    ("不挂了", True),
    ("算了 不改了", True),
    ("先不提交了", False),  # holds the confirmation open, it does not cancel
    ("社保卡不见了", False),
    ("单位不交了，公司倒闭", False),
])
def test_is_cancel(text, expected):
    assert L.is_cancel(text) is expected


@pytest.mark.parametrize("text,expected", [
    ("不办这个了", True),
    ("我不挂失了", True),
    ("不查了，帮我查养老金", True),
    ("先不挂失了", False),
    ("暂时不办了", False),
    ("不要取消", False),
])
def test_abandons(text, expected):
    assert L.abandons(text) is expected


@pytest.mark.parametrize("text,expected", [
    ("不用，先把挂失办完", True),
    ("不换", True),
    ("还是先办这个", True),
    ("好的", False),
    ("要", False),
    ("换吧", False),
])
def test_is_decline(text, expected):
    assert L.is_decline(text) is expected


@pytest.mark.parametrize("text,expected", [
    ("办理", True),
    ("好的，办理吧", True),
    ("先办这个", False),  # ambiguous: "this one" may be the business in progress
    ("不用", False),
    ("不办", False),
    ("我想问一下", False),
])
def test_is_accept(text, expected):
    assert L.is_accept(text) is expected


@pytest.mark.parametrize("text,expected", [
    ("确认", True),
    ("确认无误，提交", True),
    ("好的，提交吧", True),
    ("不确认", False),
    ("确定吗？", False),
    ("提交以后多久能拿到卡？", False),
    ("不对", False),
    ("确认一下地址", False),
])
def test_is_confirm(text, expected):
    assert L.is_confirm(text) is expected


@pytest.mark.parametrize("text,expected", [
    ("重试", True),
    ("重新提交", True),
    ("再查一下", False),
    ("不要重试", False),
])
def test_is_retry(text, expected):
    assert L.is_retry(text) is expected


@pytest.mark.parametrize("text,expected", [
    ("修改地址", True),
    ("地址写错了", True),
    ("改成李四", True),
    ("都对", False),
    ("没错", False),
])
def test_wants_modify(text, expected):
    assert L.wants_modify(text) is expected


@pytest.mark.parametrize("text,question,how", [
    ("需要什么材料", True, True),
    ("怎么挂失", True, True),
    ("到账了吗？", True, False),
    ("可以吗", True, False),
    ("好的", False, False),
    ("我叫张伟", False, False),
    ("是不是要本人去", True, False),
])
def test_is_question_and_is_how_question(text, question, how):
    assert (L.is_question(text), L.is_how_question(text)) == (question, how)


@pytest.mark.parametrize("text,kind", [
    ("你好", "greeting"),
    ("谢谢", "closing"),
    ("没事了，拜拜", "closing"),
    ("转人工", "handoff"),
    ("我要投诉", "handoff"),
    ("你是谁", "self_intro"),
    ("谢谢，帮我查养老金", None),
    ("你好，我要办社保卡", None),
    # A complaint opens with the request: the hand-off text, not a field value.
    ("我要投诉你们社保局的工作人员服务态度太差了", "handoff"),
    ("西湖区人工湖路8号", None),  # an address with 人工 in it
    ("好的", None),
    ("有人吗？", "greeting"),
    ("我要找你们领导", "handoff"),
    ("谢谢，那我明天再来", "closing"),
    # One clause asks for a person, wherever it stands (issue 25).
    ("能不能让人工帮我弄啊，我搞不懂临时还是正式", "handoff"),
    ("我也说不清，有没有人工可以问问", "handoff"),
    ("人工服务", "handoff"),
    ("人工关节医保能报吗", None),  # a medical term, no person asked for
    ("寄到杭州市西湖区文三路100号，华星公司客服部", None),
    ("330122196303150178，人工", None),  # a value with a word: no clause asks
])
def test_small_talk(text, kind):
    assert L.small_talk(text) == kind


@pytest.mark.parametrize("text,expected", [
    ("不想说", True),
    ("不方便", True),
    ("为什么要这个", True),
    ("可以不填吗", True),
    ("社保卡有什么用", False),
    ("不是不想说，是忘了", False),
    ("不知道", False),
    ("不是不愿意，是不记得了", False),
    ("为什么要先冻结", False),
    ("不方便去柜台", False),
])
def test_is_refusal(text, expected):
    assert L.is_refusal(text) is expected


@pytest.mark.parametrize("text,answer", [
    ("打错了，是张伟", "张伟"),
    ("不对，应该是13812345678", "13812345678"),
    ("不好意思，写错了，是李四", "李四"),
    ("嗯，杭州", "杭州"),
    ("张伟", "张伟"),
    ("嗯嗯", "嗯嗯"),        # nothing left: the text stays
    ("是的", "是的"),
    ("呃……上海", "上海"),
    ("哦不，是宁波", "宁波"),
])
def test_strip_preamble(text, answer):
    assert L.strip_preamble(text) == answer


@pytest.mark.parametrize("text,expected", [
    ("好的", True),
    ("嗯嗯", True),
    ("收到了", True),
    ("张伟", False),
    ("13812345678", False),
    ("好的，地址是杭州", False),
    ("好的谢谢", True),
    ("可以的", True),
])
def test_is_conversational(text, expected):
    assert L.is_conversational(text) is expected


@pytest.mark.parametrize("text,expected", [
    ("办理", True), ("确认", True), ("继续办理", True), ("提交", True), ("确定", True),
    ("好的", False), ("嗯", False), ("对", False), ("谢谢", False), ("办理社保卡", False),
])
def test_asks_to_act(text, expected):
    assert L.asks_to_act(text) is expected


@pytest.mark.parametrize("text,expected", [
    ("？？", True), ("。。。", True), ("啊", True), ("……", True), ("啊？", True), ("😅", True),
    ("~~", True), ("嗯", False), ("好", False), ("1", False), ("a", False), ("张三", False),
    ("？？张三", False),
])
def test_is_contentless(text, expected):
    assert L.is_contentless(text) is expected


@pytest.mark.parametrize("text,expected", [
    ("谢谢", True), ("好的谢谢", True), ("辛苦了", True), ("谢谢你", True),
    ("再见", False), ("谢谢再见", False), ("没有了", False), ("就这些", False),
])
def test_is_thanks(text, expected):
    assert L.is_thanks(text) is expected


@pytest.mark.parametrize("text,expected", [
    ("你好", True), ("在吗", True), ("早上好", True), ("帮助", False), ("你能做什么", False),
])
def test_is_salutation(text, expected):
    assert L.is_salutation(text) is expected
