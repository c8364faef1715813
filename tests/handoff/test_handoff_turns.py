"""Hand-off through the controller: what the citizen is told, the ticket's masked
context, messages to the staff member instead of the engine, leaving, handing back."""

from __future__ import annotations

from pathlib import Path

import pytest

from si_agent.config.hours import OfficeHours
from si_agent.config.loader import load_businesses
from si_agent.config.settings import Settings
from si_agent.engine.rules import RuleEngine
from si_agent.executor import Executors
from si_agent.flow.controller import Controller
from si_agent.handoff import Desk, MemoryTicketStore, Outcome, Reason
from si_agent.session import MemoryStore

ROOT = Path(__file__).resolve().parents[2]
ID = "330102199503080133"


@pytest.fixture(scope="module")
def catalog():
    return load_businesses(ROOT / "businesses")


@pytest.fixture
def controller(catalog, tmp_path) -> Controller:
    settings = Settings(business_dir=ROOT / "businesses", data_dir=tmp_path)
    desk = Desk(MemoryTicketStore(), hours=OfficeHours.parse("always"))
    return Controller(catalog, MemoryStore(), RuleEngine(catalog), Executors(settings),
                      handoff=desk, handoff_text="本地人社服务热线0571-12345")


def start_card_loss(controller: Controller, user: str = "u") -> None:
    turn = controller.handle(user, f"社保卡丢了，身份证{ID}，刘洋")
    assert turn.awaiting == "phone"


def test_nobody_at_the_queue_gets_the_contact_and_the_number(controller):
    start_card_loss(controller)
    turn = controller.handle("u", "转人工")
    number = turn.handoff.number
    assert number.startswith("H") and turn.handoff.state == "waiting"
    assert "本地人社服务热线0571-12345" in turn.reply and number in turn.reply
    assert "稍候" not in turn.reply and "12333" not in turn.reply
    assert turn.awaiting == "phone" and turn.business.id == "card_loss"  # untouched
    ticket = controller.handoff.get(number)
    assert ticket.reason == Reason.ASKED and ticket.business_id == "card_loss"
    # the name as the conversation review shows it (si_agent.turns.masking), not in full
    assert ticket.fields == {"身份证号": "3301**********0133", "姓名": "刘*"}
    assert ID not in ticket.model_dump_json()  # masked in the turns too
    assert "刘洋" not in ticket.model_dump_json()
    assert any("刘*" in t.text for t in ticket.turns if t.role == "user")
    assert [t.role for t in ticket.turns][-2:] == ["user", "assistant"]
    again = controller.handle("u", "我要投诉")  # one open ticket per session
    assert again.handoff.number == number and number in again.reply
    assert [t.number for t in controller.handoff.queue()] == [number]


def test_a_complaint_and_repeated_failures_open_tickets(controller):
    assert controller.handoff.get(controller.handle("c", "我要投诉").handoff.number).reason == \
        Reason.COMPLAINT
    controller.handle("f", "申领社保卡")
    controller.handle("f", "孙小美")
    for bad in ("330106199001011234", "3301061990010112", "33010619901301123X"):
        turn = controller.handle("f", bad)
    assert "已连续3次未能通过校验" in turn.reply and turn.handoff is not None
    assert controller.handoff.get(turn.handoff.number).reason == Reason.FAILURES
    assert turn.awaiting == "id_number"


def test_someone_at_the_queue_is_promised_and_answers_here(controller):
    controller.handoff.beat("gh1024")
    start_card_loss(controller)
    turn = controller.handle("u", "人工")
    number = turn.handoff.number
    assert "人工客服接入后会在这里回复您" in turn.reply and "第1位" in turn.reply
    # while waiting, the assistant goes on with the business
    controller.handle("u", "13800138000")
    assert controller.handle("u", "临时挂失").state == "confirming"
    controller.handoff.take(number, "gh1024")
    turn = controller.handle("u", f"我的身份证是{ID}，卡丢在公交上了")
    assert turn.reply == "" and turn.handoff.state == "held" and turn.handoff.staff == "gh1024"
    assert turn.state == "confirming"  # the engine did not take it
    ticket = controller.handoff.get(number)
    said = ticket.messages[-1]
    assert said.sender == "citizen" and ID not in said.text and "卡丢在公交上了" in said.text
    assert turn.handoff.seq == said.seq
    controller.handoff.reply(number, "gh1024", "好的，我帮您核实")
    controller.handoff.hand_back(number, "gh1024")
    turn = controller.handle("u", "确认")  # back with the assistant, where it was
    assert turn.handoff is None and turn.state == "done"
    assert controller.load("u").handoff is None


def test_the_citizen_leaves_the_queue(controller):
    start_card_loss(controller)
    number = controller.handle("u", "转人工").handoff.number
    turn = controller.handle("u", "结束人工")
    assert number in turn.reply and "我们继续办理【社保卡挂失】" in turn.reply
    assert turn.handoff is None and turn.awaiting == "phone"
    assert controller.handoff.get(number).outcome == Outcome.LEFT
    assert "当前没有进行中的人工服务" in controller.handle("u", "结束人工").reply
    history = [m.text for m in controller.transcript("u")]
    assert "结束人工" in history


def test_cancel_while_held_ends_the_handoff_not_the_business(controller):
    controller.handoff.beat("gh1024")
    start_card_loss(controller)
    number = controller.handle("u", "转人工").handoff.number
    controller.handoff.take(number, "gh1024")
    turn = controller.handle("u", "取消")
    assert turn.business.id == "card_loss" and turn.awaiting == "phone"
    assert controller.handoff.get(number).outcome == Outcome.LEFT


def test_starting_over_leaves_the_queue(controller):
    number = controller.handle("u", "转人工").handoff.number
    controller.reset("u")
    assert controller.handoff.get(number).outcome == Outcome.LEFT
