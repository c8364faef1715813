"""An answer that means the citizen does not qualify (issue 25, class 9): the field's
policy is said instead of "没有这个选项", with the way to stop or call; nothing is stored."""

from __future__ import annotations

import pytest

from si_agent.config.model import Ineligible
from si_agent.engine.rules import RuleEngine
from si_agent.executor import Executors
from si_agent.flow.controller import Controller
from si_agent.session import MemoryStore

START = "领失业金，身份证320102198809150628，陈静，手机13800138005"
POLICY = "本人主动辞职一般不能领取"


def _at_reason(controller):
    controller.handle("u", START)
    assert controller.handle("u", "2025年6月30日").awaiting == "separation_reason"


@pytest.mark.parametrize("answer", ["我是自己辞职的", "主动离职", "个人原因", "裸辞", "跳槽，自己辞的",
                                    "俺自己不干了，辞的工", "我自个儿递的辞呈", "自离的"])
def test_a_voluntary_quit_gets_the_policy_and_the_way_on(controller, answer):
    _at_reason(controller)
    turn = controller.handle("u", answer)
    assert POLICY in turn.reply and "12333" in turn.reply and "取消" in turn.reply
    assert "没有这个选项" not in turn.reply
    assert (turn.state, turn.awaiting) == ("collecting", "separation_reason")
    field = controller.store.load("u").fields["separation_reason"]
    assert field.value is None and field.attempts == 0  # no wrong answer counted


def test_a_real_option_wins_over_an_ineligible_word(controller):
    _at_reason(controller)
    turn = controller.handle("u", "不是我自己辞职，是被辞退的")
    assert controller.store.load("u").fields["separation_reason"].value == "被用人单位辞退"
    assert POLICY not in turn.reply


def test_then_a_real_reason_or_a_cancel(controller):
    _at_reason(controller)
    controller.handle("u", "我是自己辞职的")
    turn = controller.handle("u", "哦我记错了，其实是合同到期公司没续签")
    assert turn.awaiting == "bank_card"
    assert controller.store.load("u").fields["separation_reason"].value == "劳动合同期满终止"
    assert controller.handle("u", "那算了").state == "idle"


def test_said_in_the_first_message_the_other_values_are_kept(controller):
    turn = controller.handle("u", "我想领失业金，身份证420106199101010025，徐静怡，手机13607195566，"
                                  "2026年3月15日离职，我是自己辞职的")
    assert POLICY in turn.reply and turn.awaiting == "separation_reason"
    fields = controller.store.load("u").fields
    assert fields["separation_date"].value == "2026-03-15" and fields["name"].value == "徐静怡"


def test_at_confirming_a_changed_reason_that_does_not_qualify(controller):
    controller.handle("u", START)
    controller.handle("u", "2025年6月30日，协商解除")
    assert controller.handle("u", "6013820800012345672").state == "confirming"
    controller.handle("u", "修改离职原因")
    turn = controller.handle("u", "其实是我自己辞职的")
    assert POLICY in turn.reply and turn.awaiting == "separation_reason"


def test_a_reply_of_its_own_is_said_instead_of_the_help(catalog, settings):
    business = catalog["unemployment_benefit"]
    own = Ineligible(value="本人主动辞职", aliases=("裸辞",), reply="【{business}】：{label}不符合条件。")
    fields = tuple(f.model_copy(update={"ineligible": (own,)}) if f.key == "separation_reason"
                   else f for f in business.fields)
    patched = {**catalog, business.id: business.model_copy(update={"fields": fields})}
    with Executors(settings) as executors:
        controller = Controller(patched, MemoryStore(), RuleEngine(patched), executors,
                                handoff_text="0571-12345678")
        _at_reason(controller)
        turn = controller.handle("u", "裸辞")
    assert "【失业保险金申领】：离职原因不符合条件。" in turn.reply and POLICY not in turn.reply
    assert "0571-12345678" in turn.reply and "离职原因其实是其他情况" in turn.reply
