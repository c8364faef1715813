"""Turns end to end through the controller: untrusted calls, steps, limits, records."""

from __future__ import annotations

import sqlite3

from si_agent.config.model import Ask
from si_agent.core.decision import Decision, ToolCall
from si_agent.session.model import Session

ID = "330122196303150178"  # demo person 张伟


class ScriptedEngine:
    """An engine returning fixed decisions: stands in for a misbehaving model."""

    name = "scripted"

    def __init__(self, *decisions: list[ToolCall]) -> None:
        self.decisions = list(decisions)
        self.seen_tools: list[list[str]] = []

    def decide(self, view, message, tools, on_text=None):
        self.seen_tools.append([t["function"]["name"] for t in tools])
        return Decision(calls=self.decisions.pop(0), engine=self.name)


def call(name, **arguments) -> ToolCall:
    return ToolCall(name=name, arguments=arguments)


def test_empty_and_too_long_messages_change_nothing(make_controller):
    ctl = make_controller(max_message_chars=20)
    ctl.handle("u", "我要转社保")
    before = ctl.store.load("u")
    for bad in ("", "   ", "杭" * 21):
        turn = ctl.handle("u", bad)
        assert turn.state == "collecting"
        assert turn.reply in ("您好像没有输入内容，请问有什么可以帮您？",
                              "您的消息太长了（超过20个字），请精简后再发送。")
    after = ctl.store.load("u")
    assert after.model_dump() == before.model_dump()


def test_untrusted_calls_are_rejected_and_recorded(make_controller):
    engine = ScriptedEngine(
        [call("match_business", business_id="no_such_business")],
        [call("confirm_submit")],
        [call("delete_everything")],
        [call("match_business", business_id="social_transfer"),
         call("provide_field", values={"from_city": "杭州", "salary": "9999"})],
        [call("provide_field", values="杭州")],
        [call("confirm_submit")],
    )
    ctl = make_controller(engine=engine)
    for _ in range(3):
        turn = ctl.handle("u", "随便说点什么")
        assert turn.state == "idle" and turn.business is None
    turn = ctl.handle("u", "转社保")
    assert turn.state == "collecting" and turn.awaiting == "to_city"
    assert [f.value for f in turn.fields if f.key == "from_city"] == ["杭州市"]
    assert ctl.handle("u", "x").state == "collecting"
    assert ctl.handle("u", "x").state == "collecting"  # confirm_submit while collecting
    memory = ctl.store.load("u").memory
    outcomes = [c.outcome for r in memory for c in r.calls]
    assert outcomes[0] == "rejected: unknown business 'no_such_business'"
    assert outcomes[1] == "rejected: confirm_submit not offered in idle"
    assert outcomes[2] == "rejected: delete_everything not offered in idle"
    assert outcomes[-2] == "rejected: values: Input should be a valid dictionary"
    assert outcomes[-1] == "rejected: confirm_submit not offered in collecting"
    reasons = [(c.status, c.reason) for r in memory for c in r.calls]
    assert reasons[:3] == [("rejected", "unknown_business"), ("rejected", "not_offered"),
                           ("rejected", "not_offered")]
    assert reasons[-2:] == [("rejected", "bad_arguments"), ("rejected", "not_offered")]
    assert engine.seen_tools[0] == ["match_business", "cancel_flow", "answer_question",
                                    "small_talk"]
    assert engine.seen_tools[-1] == ["provide_field", "modify_info", "explain_field",
                                     "switch_business", "cancel_flow", "answer_question",
                                     "small_talk"]


def test_decision_records_mask_personal_data(controller):
    controller.handle("u", "我要转社保")
    controller.handle("u", f"从杭州到苏州，身份证{ID}，手机13812345678")
    session = controller.store.load("u")
    dumped = session.model_dump_json()
    record = session.memory[-1]
    assert ID not in record.input and "13812345678" not in record.input
    assert "3301**********0178" in record.input
    assert record.calls[0].arguments["values"]["id_number"] == "3301**********0178"
    assert record.state_before == "collecting"
    assert ID not in dumped.split('"records"')[1]


def test_ask_two_fields_at_once(make_controller, catalog):
    ctl = make_controller()
    ctl.catalog.replace(catalog["social_transfer"].model_copy(
        update={"ask": Ask(max_fields=2)}))
    turn = ctl.handle("u", "我要转社保")
    assert "转出" in turn.reply and "转入哪个城市" in turn.reply


def test_retry_after_failure_submits_once(make_controller, settings):
    from si_agent.demo_backend import ensure_db, fail_next

    ctl = make_controller()
    for text in ("我要转社保", "从杭州转到苏州", ID, "张伟"):
        turn = ctl.handle("u", text)
    assert turn.state == "confirming"
    ensure_db(settings.demo_backend_db)
    count = "SELECT COUNT(*) FROM applications WHERE business_id = 'social_transfer'"
    with sqlite3.connect(settings.demo_backend_db) as db:
        before = db.execute(count).fetchone()[0]
    fail_next(settings.demo_backend_db, 1)
    turn = ctl.handle("u", "确认")
    assert turn.state == "failed" and "重试" in turn.reply
    turn = ctl.handle("u", "重试")
    assert turn.state == "done"
    number = turn.result["application_no"]
    with sqlite3.connect(settings.demo_backend_db) as db:
        rows = db.execute("SELECT COUNT(*) FROM applications WHERE application_no = ?",
                          (number,)).fetchone()[0]
        after = db.execute(count).fetchone()[0]
    assert rows == 1 and after == before + 1


def test_a_business_removed_from_the_config_ends_the_stored_flow(controller):
    for state in ("collecting", "step_executing", "confirming", "failed"):
        controller.store.delete("u")
        controller.store.save(Session(session_id="u", state=state, business_id="retired"))
        turn = controller.handle("u", "取消")
        assert turn.state == "idle" and turn.business is None
        assert "已暂停在线办理" in turn.reply
        assert controller.handle("u", "查养老金").state == "collecting"


def test_a_suggestion_lasts_one_turn(controller):
    assert controller.handle("u", "社保转移需要什么材料").suggestion.business_id == "social_transfer"
    turn = controller.handle("u", "今天天气怎么样")
    assert turn.suggestion is None
    assert controller.handle("u", "好的").state == "idle"
