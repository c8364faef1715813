"""Greetings, thanks, junk and a bare "办理" (the outsider's report on the offline assistant):
the business in progress stays, its field is asked again, nothing is looked up."""

from __future__ import annotations

import pytest

ID = "33010619900101123X"


def _last(controller, user="u"):
    return controller.store.load(user).memory[-1]


def _fields(turn):
    return {f.key: f.value for f in turn.fields}


@pytest.mark.parametrize("text", ["办理", "确认", "继续办理", "提交"])
def test_a_bare_go_ahead_in_idle_asks_which_business(controller, text):
    turn = controller.handle("u", text)
    assert turn.state == "idle" and turn.business is None
    assert "目前没有需要您确认或继续办理的业务" in turn.reply
    assert "不客气" not in turn.reply
    assert "card_apply" in [b.id for b in turn.services]  # the list is shown (as buttons on the page)
    assert (_last(controller).rule, _last(controller).confidence) == ("small_talk", 1.0)


def test_an_accepted_suggestion_still_starts_it(controller):
    controller.handle("u", "社保卡丢了怎么办")
    turn = controller.handle("u", "办理")
    assert turn.state == "collecting" and turn.business.id == "card_loss"


@pytest.mark.parametrize("text,said", [("你好", "您好！"), ("谢谢", "不客气。"),
                                        ("好的，谢谢", "不客气。")])
def test_greeting_or_thanks_mid_business_keeps_it(controller, text, said):
    controller.handle("u", f"申请社保卡，张伟，{ID}")
    turn = controller.handle("u", text)
    assert (turn.state, turn.business.id, turn.awaiting) == ("collecting", "card_apply", "phone")
    assert _fields(turn)["name"] == "张伟"
    assert turn.reply.startswith(said + "我们继续办理【社保卡申领】。")
    assert "手机号码" in turn.reply and "没有理解" not in turn.reply
    assert _last(controller).confidence == 1.0


@pytest.mark.parametrize("text", ["？？", "。。。", "啊", "……", "?"])
def test_junk_mid_business_asks_the_field_again_and_looks_nothing_up(controller, text):
    controller.handle("u", f"申请社保卡，张伟，{ID}，13912345678")
    turn = controller.handle("u", text)
    assert (turn.state, turn.awaiting) == ("collecting", "bank")
    record = _last(controller)
    assert [c.name for c in record.calls] == ["explain_field"]  # no answer_question
    assert record.confidence == 1.0  # hybrid asks no model about "？？"
    assert "合作银行就是" in turn.reply  # the field's help
    assert turn.reply.rstrip().endswith("中国邮政储蓄银行。")  # then its prompt
    assert {k for k, v in _fields(turn).items() if v} == {"name", "id_number", "phone"}


def test_junk_while_confirming_shows_the_summary_again(controller):
    controller.handle("u", f"申请社保卡，张伟，{ID}，13912345678，建设银行，"
                           "浙江省杭州市滨江区江南大道3588号")
    turn = controller.handle("u", "？？")
    assert (turn.state, turn.awaiting) == ("confirming", "confirm")
    assert "请核对" in turn.reply and "暂时无法回答" not in turn.reply
