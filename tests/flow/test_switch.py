"""Switching business mid-flow: the flow stack, its bound, its storage, and the same
behaviour through the action table when a model (here scripted) decides."""

from __future__ import annotations

import pytest

from si_agent.config.assistant import AssistantTexts
from si_agent.core.decision import Decision, ToolCall
from si_agent.session import MemoryStore, RedisStore, SQLiteStore
from si_agent.session.model import MAX_SUSPENDED

ID = "330122196303150178"  # demo person 张伟


class ScriptedEngine:
    """Fixed decisions, as a model would return them."""

    name = "scripted"

    def __init__(self, *decisions: list[ToolCall]) -> None:
        self.decisions = list(decisions)

    def decide(self, view, message, tools, on_text=None):
        return Decision(calls=self.decisions.pop(0), engine=self.name)


def call(name, **arguments) -> ToolCall:
    return ToolCall(name=name, arguments=arguments)


def test_ask_switch_resume_with_every_value(controller):
    controller.handle("u", f"社保卡丢了，身份证{ID}，名字张伟")
    turn = controller.handle("u", "查进度")
    assert turn.business.id == "card_loss" and turn.suggestion.business_id == "progress_query"
    assert "您正在办理【社保卡挂失】（已填写2项），要先办理【办理进度查询】吗？" in turn.reply
    turn = controller.handle("u", "好")
    assert (turn.business.id, turn.state) == ("progress_query", "collecting")
    assert [(s.business_id, s.filled) for s in turn.suspended] == [("card_loss", 2)]
    turn = controller.handle("u", "取消")
    assert "刚才的【社保卡挂失】还没办完，要继续吗？" in turn.reply
    turn = controller.handle("u", "继续")
    assert (turn.business.id, turn.state, turn.awaiting) == ("card_loss", "collecting", "phone")
    assert {f.key: f.value for f in turn.fields if f.value}["name"] == "张伟"
    assert turn.suspended == []


def test_declining_keeps_the_business_and_nothing_is_counted(controller):
    controller.handle("u", f"社保卡丢了，身份证{ID}")
    controller.handle("u", "查养老金")
    turn = controller.handle("u", "不用，先把挂失办完")
    assert (turn.business.id, turn.awaiting, turn.suspended) == ("card_loss", "name", [])
    assert "好的，我们继续办理【社保卡挂失】。" in turn.reply
    stored = controller.store.load("u")
    assert stored.fields["name"].attempts == 0 and stored.fields["name"].value is None


def test_dropping_for_good_switches_at_once_without_keeping(controller):
    controller.handle("u", "申请社保卡，我叫孙小美")
    turn = controller.handle("u", "不办这个了，帮我查养老金")
    assert (turn.business.id, turn.awaiting, turn.suspended) == ("pension_query", "id_number", [])
    assert "当前业务会为您保留" not in turn.reply


def test_at_most_three_are_kept_the_oldest_goes(make_controller):
    order = ["card_apply", "card_loss", "social_transfer", "medical_filing", "pension_query"]
    engine = ScriptedEngine(
        [call("match_business", business_id=order[0])],
        *[[call("switch_business", business_id=b)] for b in order[1:]],
    )
    ctl = make_controller(engine=engine)
    for _ in order:
        turn = ctl.handle("u", "…")
    assert turn.business.id == "pension_query"
    assert [s.business_id for s in turn.suspended] == order[1:4]
    assert len(turn.suspended) == MAX_SUSPENDED


def test_a_model_switches_through_the_action_table(make_controller):
    engine = ScriptedEngine(
        [call("match_business", business_id="card_loss"),
         call("provide_field", values={"id_number": ID})],
        [call("answer_question", question="", suggested_business_id="progress_query")],
        [call("switch_business", business_id="progress_query")],
        [call("cancel_flow")],
        [call("switch_business", business_id="progress_query")],  # not offered in idle
        [call("match_business", business_id="card_loss")],
    )
    ctl = make_controller(engine=engine)
    ctl.handle("u", "…")
    assert "要先办理【办理进度查询】吗" in ctl.handle("u", "…").reply
    assert ctl.handle("u", "…").business.id == "progress_query"
    assert "刚才的【社保卡挂失】还没办完" in ctl.handle("u", "…").reply
    assert ctl.handle("u", "…").state == "idle"
    turn = ctl.handle("u", "…")
    assert (turn.business.id, turn.awaiting) == ("card_loss", "name")
    records = ctl.store.load("u").memory
    rejected = [c for r in records for c in r.calls if c.status == "rejected"]
    assert [(c.name, c.reason) for c in rejected] == [("switch_business", "not_offered")]


def test_switching_to_the_business_in_progress_is_rejected(make_controller):
    engine = ScriptedEngine([call("match_business", business_id="card_loss")],
                            [call("switch_business", business_id="card_loss")])
    ctl = make_controller(engine=engine)
    ctl.handle("u", "…")
    ctl.handle("u", "…")
    last = ctl.store.load("u").memory[-1].calls[-1]
    assert (last.status, last.reason) == ("rejected", "not_allowed")


@pytest.mark.parametrize("kind", ["memory", "sqlite", "redis"])
def test_suspended_businesses_are_stored_with_the_session(make_controller, tmp_path, kind):
    store = {"memory": lambda: MemoryStore(),
             "sqlite": lambda: SQLiteStore(tmp_path / "s.db"),
             "redis": lambda: RedisStore("redis://127.0.0.1:6379/15", prefix=f"switch-{id(tmp_path)}:"),
             }[kind]()
    ctl = make_controller(store=store)
    ctl.handle("u", f"社保卡丢了，身份证{ID}")
    ctl.handle("u", "查养老金")
    ctl.handle("u", "好")
    stored = store.load("u")
    assert [f.business_id for f in stored.suspended] == ["card_loss"]
    assert stored.suspended[0].fields["id_number"].value == ID
    assert stored.suspended[0].awaiting == "name"


def test_staff_texts_override_the_switching_words(make_controller):
    texts = AssistantTexts(switch_ask="先办【{target}】？【{current}】已填{filled}项，会保留。")
    ctl = make_controller(texts=texts)
    ctl.handle("u", f"社保卡丢了，身份证{ID}")
    assert ctl.handle("u", "查养老金").reply.startswith("先办【养老金查询】？【社保卡挂失】已填1项，会保留。")


# -- regressions found in review ---------------------------------------------------


@pytest.mark.parametrize("keyword,target", [
    ("查进度", "progress_query"), ("看病", "medical_filing"), ("缴费记录", "insurance_record"),
    ("零工", "flexible_employment"), ("查退休金", "pension_query"),
])
def test_a_bare_keyword_while_a_name_is_awaited_asks_to_switch(controller, keyword, target):
    controller.handle("u", f"社保卡丢了，身份证{ID}")
    turn = controller.handle("u", keyword)
    assert turn.suggestion.business_id == target and "已记录" not in turn.reply
    assert controller.store.load("u").fields["name"].value is None


@pytest.mark.parametrize("reason", ["公司不做了，倒闭了", "单位不交了，公司倒闭"])
def test_a_company_that_stopped_is_no_cancel(controller, reason):
    controller.handle("u", "我要领失业金，身份证320102198809150628，陈静，手机13800138005，"
                           "上个月15号离职")
    turn = controller.handle("u", reason)
    assert turn.business is not None and turn.business.id == "unemployment_benefit"
    assert "已为您取消" not in turn.reply


def test_dropping_for_good_with_one_kept_asks_nothing_in_between(controller):
    controller.handle("u", f"社保卡丢了，身份证{ID}")
    controller.handle("u", "查进度")
    controller.handle("u", "好")
    turn = controller.handle("u", "不办这个了，帮我查养老金")
    assert turn.business.id == "pension_query" and "还没办完" not in turn.reply
    assert turn.suggestion is None
    turn = controller.handle("u", "好")  # no pending offer: not a switch to 挂失
    assert turn.business.id == "pension_query"


@pytest.mark.parametrize("answer", ["确认提交", "提交", "继续"])
def test_confirm_or_continue_is_no_yes_to_a_switch(controller, answer):
    controller.handle("u", f"挂失社保卡，{ID}，张伟，13800138001，正式挂失")
    assert controller.handle("u", "查进度").suggestion is not None
    turn = controller.handle("u", answer)
    assert turn.business.id == "card_loss"


@pytest.mark.parametrize("answer", ["还是先查养老金吧", "别管挂失了，先查养老金"])
def test_naming_the_offered_business_is_a_yes(controller, answer):
    controller.handle("u", f"社保卡丢了，身份证{ID}")
    controller.handle("u", "查养老金")
    assert controller.handle("u", answer).business.id == "pension_query"


@pytest.mark.parametrize("address", ["不方便的话寄到公司，文三路100号", "隐私路5号",
                                     "西湖区人工湖路8号", "杭州市客服中心大楼3楼"])
def test_an_address_with_refusal_or_handoff_words_is_an_address(controller, address):
    controller.handle("u", "我要办社保卡，王芳，320583199008230462，13800138003，工商银行")
    turn = controller.handle("u", address)
    assert turn.state == "confirming", turn.reply


def test_the_resume_button_takes_a_kept_business_up_at_once(controller):
    controller.handle("u", f"社保卡丢了，身份证{ID}")
    controller.handle("u", "查进度")
    controller.handle("u", "好")
    turn = controller.handle("u", "继续办理【社保卡挂失】")
    assert (turn.business.id, turn.awaiting) == ("card_loss", "name")
    assert [s.business_id for s in turn.suspended] == ["progress_query"]


def test_a_dropped_kept_business_is_said(make_controller):
    order = ["card_apply", "card_loss", "social_transfer", "medical_filing", "pension_query"]
    engine = ScriptedEngine(
        [call("match_business", business_id=order[0])],
        *[[call("switch_business", business_id=b)] for b in order[1:]],
    )
    ctl = make_controller(engine=engine)
    replies = [ctl.handle("u", "…").reply for _ in order]
    assert "最多为您保留3项未办完的业务，最早的【社保卡申领】已不再保留。" in replies[-1]


@pytest.mark.parametrize("filler", ["打错了", "嗯，这个嘛"])
def test_a_preamble_alone_is_no_failed_attempt(controller, filler):
    controller.handle("u", f"社保卡丢了，身份证{ID}")
    controller.handle("u", filler)
    assert controller.store.load("u").fields["name"].attempts == 0
