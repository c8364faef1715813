"""Corrections and values told the way people tell them (issue 25, from the third blind
corpus's failures, in other words than its transcripts): a typo'd name retold after a
description of the wrong character, a reproach naming the wrong value before the right
one, a value given as what to go by, and a consultation asked for with nothing in the
knowledge base to answer it."""

from __future__ import annotations

import pytest

ID = "330122196303150178"


def fields(controller, user: str) -> dict:
    session = controller.store.load(user)
    return {k: st.value for k, st in session.fields.items() if st.status == "collected"}


@pytest.mark.parametrize("retold", [
    "等一下，名字写错字了，中间那个是建设的建，张建国",
    "哎呀姓名有个错字，最后一个字是国家的国，张建国",
])
def test_a_name_retold_after_describing_the_typo(controller, retold):
    for text in ("我的社保卡丢了，要挂失", ID, "张建华"):
        turn = controller.handle("u", text)
    assert turn.awaiting == "phone"
    turn = controller.handle("u", retold)
    assert fields(controller, "u")["name"] == "张建国"
    assert turn.state == "collecting" and turn.awaiting == "phone"


@pytest.mark.parametrize(("reproach", "key", "value"), [
    ("转出城市怎么变成杭州了？应该是宁波", "from_city", "宁波市"),
    ("哎，怎么填成杭州了，我是从宁波转出来的", "from_city", "宁波市"),
])
def test_a_reproach_then_the_right_value_at_confirming(controller, reproach, key, value):
    for text in ("我要办社保转移，从杭州转到南京", ID, "张建华"):
        turn = controller.handle("u", text)
    assert turn.state == "confirming"
    turn = controller.handle("u", reproach)
    assert turn.state == "confirming"
    assert fields(controller, "u")[key] == value
    assert fields(controller, "u")["to_city"] == "南京市"
    assert "受理编号" not in turn.reply


def test_a_reproach_without_the_right_value_asks_for_it(controller):
    for text in ("我要办社保转移，从杭州转到南京", ID, "张建华"):
        controller.handle("u", text)
    turn = controller.handle("u", "转入城市怎么写成南京了？")
    assert fields(controller, "u")["to_city"] == "南京市"  # nothing stored from the words
    assert "受理编号" not in turn.reply


@pytest.mark.parametrize(("told", "value"), [("那就按1.5算吧", 1.5), ("就按一来算", 1.0),
                                             ("按零点八算好了", 0.8)])
def test_a_value_given_as_what_to_go_by(controller, told, value):
    for text in ("帮我算算养老金", "60岁退休，交了25年", "社平工资8000"):
        turn = controller.handle("u", text)
    assert turn.awaiting == "contribution_index"
    turn = controller.handle("u", told)
    assert fields(controller, "u")["contribution_index"] == value
    assert turn.awaiting == "account_balance"


def test_a_consultation_asked_for_with_no_answer_in_the_knowledge_base_starts(controller):
    turn = controller.handle("u", "我该买什么保险呢")
    assert turn.business is not None and turn.business.id == "insurance_consult"
    assert turn.state == "collecting"
    assert "暂时无法回答" not in turn.reply
