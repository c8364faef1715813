"""A cancel with a safety net (issue 25, class 8): the cancelled business is kept for
the session like a switched one, "继续" brings it back where it stood, and it is
offered again after another business is done."""

from __future__ import annotations

import pytest

from si_agent.core.decision import Decision, Rule, ToolCall

ID = "330122196303150178"  # demo person 张伟


def _values(turn):
    return {f.key: f.value for f in turn.fields if f.value is not None}


@pytest.mark.parametrize("stop", ["算了", "先不办了", "不弄了", "取消", "不申请了"])
def test_a_cancel_with_values_says_how_to_resume(controller, stop):
    controller.handle("u", f"申请社保卡，张伟，{ID}")
    turn = controller.handle("u", stop)
    assert turn.state == "idle" and turn.business is None
    assert "已为您取消【社保卡申领】的办理" in turn.reply and "继续" in turn.reply
    assert [(s.business_id, s.filled) for s in turn.suspended] == [("card_apply", 2)]


@pytest.mark.parametrize("again", ["继续", "继续办吧", "刚才那个接着办", "还是继续吧",
                                   "我还是办吧，继续刚才的"])
def test_continue_restores_the_step_and_the_values(controller, again):
    controller.handle("u", f"申请社保卡，张伟，{ID}")
    controller.handle("u", "算了")
    turn = controller.handle("u", again)
    assert (turn.business.id, turn.state, turn.awaiting) == ("card_apply", "collecting", "phone")
    assert _values(turn) == {"name": "张伟", "id_number": "3301**********0178"}  # masked
    assert "继续办理【社保卡申领】" in turn.reply and turn.suspended == []


def test_continue_at_confirming_confirms_again(controller):
    controller.handle("u", f"改手机号，身份证{ID}，张伟，新号码15900001111")
    assert controller.handle("u", "取消").state == "idle"
    turn = controller.handle("u", "继续")
    assert (turn.state, turn.awaiting) == ("confirming", "confirm")
    assert controller.store.load("u").fields["new_phone"].value == "15900001111"


def test_continue_with_a_value_resumes_and_fills_it(controller):
    controller.handle("u", f"办社保卡，张伟，{ID}")
    controller.handle("u", "先不弄了")
    turn = controller.handle("u", "继续，手机13911112222")
    assert (turn.business.id, turn.awaiting) == ("card_apply", "bank")
    assert controller.store.load("u").fields["phone"].value == "13911112222"


def test_declining_stays_idle(controller):
    controller.handle("u", f"挂失社保卡，身份证{ID}，张伟")
    controller.handle("u", "不挂了")
    turn = controller.handle("u", "嗯，不用了谢谢")
    assert turn.state == "idle" and turn.business is None


def test_after_another_business_the_cancelled_one_is_offered_again(controller):
    controller.handle("u", f"申请社保卡，张伟，{ID}")
    controller.handle("u", "算了")
    turn = controller.handle("u", f"查养老金 {ID}")
    assert turn.state == "done" and "刚才的【社保卡申领】还没办完，要继续吗" in turn.reply
    turn = controller.handle("u", "继续")
    assert (turn.business.id, turn.awaiting) == ("card_apply", "phone")


def test_naming_the_business_afresh_starts_from_the_start(controller):
    controller.handle("u", f"申请社保卡，张伟，{ID}")
    controller.handle("u", "算了")
    turn = controller.handle("u", "申请社保卡")
    assert (turn.business.id, turn.awaiting) == ("card_apply", "name")
    assert _values(turn) == {} and turn.suspended == []


def test_an_empty_cancelled_business_is_taken_up_only_when_asked(controller):
    controller.handle("u", "查进度")
    turn = controller.handle("u", "不查了")
    assert "继续" not in turn.reply and turn.suspended == []  # nothing to keep: no button
    turn = controller.handle("u", "继续查")
    assert (turn.business.id, turn.awaiting) == ("progress_query", "application_no")


def test_only_the_latest_cancel_is_kept_and_a_switched_one_stays(controller):
    controller.handle("u", f"社保卡丢了，身份证{ID}，张伟")
    controller.handle("u", "查进度")
    controller.handle("u", "好")  # 挂失 put aside (switched)
    controller.handle("u", "SI")  # a bad number: something typed
    controller.handle("u", "取消")
    controller.handle("u", f"申请社保卡，张伟，{ID}")
    turn = controller.handle("u", "算了")
    kept = controller.store.load("u").suspended
    assert [(f.business_id, f.cancelled) for f in kept] == [("card_loss", False),
                                                             ("card_apply", True)]
    assert [s.business_id for s in turn.suspended] == ["card_loss", "card_apply"]


def test_dropped_for_another_business_is_not_kept(controller):
    controller.handle("u", f"申请社保卡，张伟，{ID}")
    turn = controller.handle("u", "不办这个了，帮我查养老金")
    assert turn.business.id == "pension_query" and turn.suspended == []


class _Model:
    """Fixed decisions, as a model returns them (rule MODEL)."""

    name = "scripted"

    def __init__(self, *decisions: list[ToolCall]) -> None:
        self.decisions = list(decisions)

    def decide(self, view, message, tools, on_text=None):
        return Decision(calls=self.decisions.pop(0), rule=Rule.MODEL, engine=self.name)


def test_a_model_taking_up_a_cancelled_business_gets_its_values_back(make_controller):
    engine = _Model(
        [ToolCall(name="match_business", arguments={"business_id": "card_apply"}),
         ToolCall(name="provide_field", arguments={"values": {"name": "张伟", "id_number": ID}})],
        [ToolCall(name="cancel_flow")],
        [ToolCall(name="match_business", arguments={"business_id": "card_apply"})],
    )
    controller = make_controller(engine=engine)
    controller.handle("u", f"申请社保卡，张伟，{ID}")
    assert "继续" in controller.handle("u", "算了").reply
    turn = controller.handle("u", "继续")
    assert (turn.business.id, turn.awaiting) == ("card_apply", "phone")
    assert controller.store.load("u").fields["name"].value == "张伟"


def test_continue_is_a_sure_rule_decision(controller):
    controller.handle("u", f"申请社保卡，张伟，{ID}")
    controller.handle("u", "算了")
    controller.handle("u", "继续")
    record = controller.store.load("u").memory[-1]
    assert (record.rule, record.confidence) == ("resume", 1.0)  # hybrid asks no model
