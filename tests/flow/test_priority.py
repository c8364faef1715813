"""A person, a complaint or a stop has priority over field values in every state
(issue 25, class 6): never stored as a value; a hand-off keeps the business."""

from __future__ import annotations

import pytest

ID = "330122196303150178"  # demo person 张伟

# (what starts the business, the field then awaited)
AWAITING = {
    "name": ("我要申请社保卡", "name"),
    "phone": (f"社保卡丢了，身份证{ID}，张伟", "phone"),
    "enum": (f"挂失社保卡，身份证{ID}，张伟，手机13911112222", "loss_type"),
    "text": ("查进度", "application_no"),
    "address": ("办社保卡，何雪梅，330183197504308127，13588889999，邮储", "mailing_address"),
    "date": (f"异地就医备案，身份证{ID}，张伟，参保地杭州，就医地上海，临时外出就医", "start_date"),
    "number": ("养老金测算，60岁退休，交了25年", "avg_wage"),
    "city": ("转社保，从南京转出", "to_city"),
}
PERSON = ["太麻烦了 我要找人工", "转人工", "找个真人跟我说", "能不能让人工帮我弄啊，我搞不懂",
          "我要投诉，你们上回把我的卡寄丢了", "有没有人工可以问问"]


@pytest.mark.parametrize("kind", list(AWAITING))
@pytest.mark.parametrize("ask", PERSON)
def test_a_person_asked_for_gives_the_contact_and_keeps_the_field(controller, kind, ask):
    start, awaited = AWAITING[kind]
    before = controller.handle("u", start)
    assert before.awaiting == awaited
    turn = controller.handle("u", ask)
    assert "12333" in turn.reply and "人工服务" in turn.reply
    assert (turn.business.id, turn.awaiting) == (before.business.id, awaited)
    assert controller.store.load("u").fields[awaited].value is None
    assert "请稍候" not in turn.reply  # no person is promised


@pytest.mark.parametrize("kind", list(AWAITING))
@pytest.mark.parametrize("stop", ["不办了不办了", "取消吧，下回再说", "算了 不改了", "算了不转了",
                                  "那不办了"])
def test_a_stop_wins_over_any_field(controller, kind, stop):
    controller.handle("u", AWAITING[kind][0])
    turn = controller.handle("u", stop)
    assert turn.state == "idle" and "已为您取消" in turn.reply


@pytest.mark.parametrize("ask", ["我要人工客服", "转人工"])
def test_a_person_at_confirming_submits_nothing(controller, ask):
    controller.handle("u", f"社保转移，从杭州转到苏州，身份证{ID}，张伟")
    turn = controller.handle("u", ask)
    assert turn.state == "confirming" and "12333" in turn.reply and "受理编号" not in turn.reply


def test_the_consultation_says_where_an_adviser_is_and_promises_no_transfer(controller):
    controller.handle("u", "保险咨询")
    controller.handle("u", "28岁")
    turn = controller.handle("u", "太慢了，转人工吧")
    assert "人工顾问" in turn.reply and "12333" in turn.reply
    assert "请稍候" not in turn.reply and "正在为您转接" not in turn.reply
    assert turn.business.id == "insurance_consult"


def test_after_the_hand_off_the_answer_around_talk_is_taken(controller):
    controller.handle("u", "我要申请社保卡")
    controller.handle("u", "太麻烦了 我要找人工")
    turn = controller.handle("u", "那我还是自己填吧，吴丽娟")
    assert turn.awaiting == "id_number"
    assert controller.store.load("u").fields["name"].value == "吴丽娟"


def test_a_clause_is_no_answer_when_the_message_says_it_does_not_know(controller):
    controller.handle("u", "我要申请社保卡")
    controller.handle("u", "我不知道，张伟说的")
    assert controller.store.load("u").fields["name"].value is None
