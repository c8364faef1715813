"""Questions in the middle of a business and the services list, through the controller
(issue 25, classes 1 and 7): the business and the awaited field stay, the question
reaches the knowledge channel with the business as its context, a value said with it is
kept, and the services listed are in the turn object (the page shows them as buttons)."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest


@dataclass(frozen=True)
class _Answer:
    text: str
    sources: list[str] = field(default_factory=list)
    suggested_business_id: str | None = None
    refused: bool = False


class RecordingKnowledge:
    """Answers every question with a fixed text and remembers what it was asked."""

    def __init__(self) -> None:
        self.asked: list[tuple[str, str | None]] = []

    def answer(self, question: str, *, generate: bool = True, context: str | None = None):
        self.asked.append((question, context))
        return _Answer(text="【知识库回答】", sources=["测试文档"])

    def status(self) -> dict:
        return {"ok": True, "state": "ready", "detail": "test"}


@pytest.fixture
def knowledge():
    return RecordingKnowledge()


@pytest.fixture
def controller(make_controller, knowledge):
    return make_controller(knowledge=knowledge)


@pytest.mark.parametrize("question", ["这个收费不", "多久能拿到", "能寄到家里吗", "得准备些啥"])
def test_a_question_at_a_name_is_answered_in_the_business_context(controller, knowledge,
                                                                   question):
    controller.handle("u1", "我要办社保卡")
    turn = controller.handle("u1", question)
    assert (turn.state, turn.business.id, turn.awaiting) == ("collecting", "card_apply", "name")
    assert knowledge.asked == [(question, "社保卡申领")]
    assert "【知识库回答】" in turn.reply
    assert turn.reply.rstrip().endswith(turn.reply.rstrip().split("\n")[-1])
    assert "姓名" in turn.reply.split("\n")[-1]  # the awaited field is asked again
    assert all(f.value is None for f in turn.fields if f.key == "name")


def test_a_value_and_a_question_keep_the_value_and_answer(controller, knowledge):
    controller.handle("u2", "我要办社保卡 名字刘洋")
    turn = controller.handle("u2", "330102199503080133 这个要多久能拿到卡啊")
    assert turn.awaiting == "phone"
    assert "【知识库回答】" in turn.reply
    # Only the question goes to the knowledge channel, never the ID number.
    assert knowledge.asked == [("这个要多久能拿到卡啊", "社保卡申领")]


def test_a_weak_value_in_its_own_clause_is_kept(controller, knowledge):
    controller.handle("u3", "异地就医备案，身份证330102199503080133，刘洋")
    turn = controller.handle("u3", "杭州的，备案完多久生效啊")
    values = {f.key: f.value for f in turn.fields}
    assert values["insured_city"] == "杭州市"
    assert turn.awaiting == "destination_city"
    assert knowledge.asked == [("备案完多久生效啊", "异地就医备案")]


def test_how_to_fill_the_field_is_answered_from_its_help(controller, knowledge):
    controller.handle("u4", "查进度")
    turn = controller.handle("u4", "编号在哪能看到啊 我忘了")
    assert "提交成功时的回复消息里" in turn.reply
    assert turn.awaiting == "application_no"
    assert knowledge.asked == []


def test_at_rest_a_question_has_no_context(controller, knowledge):
    controller.handle("u5", "社保卡丢了怎么办")
    assert knowledge.asked == [("社保卡丢了怎么办", None)]


def test_the_services_are_listed_and_carried_in_the_turn(controller, catalog):
    turn = controller.handle("u6", "有哪些业务可以办")
    assert turn.state == "idle"
    listed = [s.id for s in turn.services]
    # Every business that can be done here, in the order shown (by kind); one that
    # misses a step handler on this deployment is not offered.
    assert sorted(listed) == sorted(b for b in catalog if b != "pension_certification")
    assert [turn.reply.index(catalog[b].name) for b in listed] == sorted(
        turn.reply.index(catalog[b].name) for b in listed)
    assert "【社保卡申领】" not in turn.reply and "社保卡申领" in turn.reply
    turn = controller.handle("u6", "那就挂失吧")
    assert (turn.state, turn.business.id) == ("collecting", "card_loss")
    assert turn.services == []


def test_the_services_mid_flow_keep_the_business_and_field(controller, knowledge):
    controller.handle("u7", "申请社保卡，刘洋，330102199503080133")
    turn = controller.handle("u7", "对了你们还能办些啥")
    assert (turn.state, turn.business.id, turn.awaiting) == ("collecting", "card_apply", "phone")
    assert "养老金查询" in turn.reply and "手机号" in turn.reply.split("\n")[-1]
    assert turn.services
    assert knowledge.asked == []
    turn = controller.handle("u7", "13800138004")
    assert turn.awaiting == "bank"


def test_the_services_at_confirming_keep_the_summary(controller):
    controller.handle("u8", "社保卡丢了，身份证330102199503080133，刘洋，手机13800138004")
    before = controller.handle("u8", "临时挂失")
    assert before.state == "confirming"
    turn = controller.handle("u8", "还有其他业务吗")
    assert (turn.state, turn.business.id) == ("confirming", "card_loss")
    assert "社保卡申领" in turn.reply and turn.services
    assert "刘洋" in turn.reply  # the summary to confirm is shown again
