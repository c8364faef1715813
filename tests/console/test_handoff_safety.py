"""The hand-off's safety and masking, through the real app: a citizen's message refused by
the moderation while a person holds the ticket, staff replies moderated and masked, a
reply refused to someone who never held the ticket, names masked on the ticket page."""

from __future__ import annotations

import re

import pytest

from tests.console.conftest import console_settings
from tests.console.test_handoff import ID, Citizen, post, signed_in_staff, text_of


@pytest.fixture
def settings(tmp_path):
    return console_settings(tmp_path, handoff_hours="always")


@pytest.fixture
def staff(app, accounts):
    # Every citizen stream served as a poll (si_agent.server.streams): the events due now,
    # so that a test reads a ticket still open without following it for a minute.
    app.config["SI_STREAMS"].limit = 0
    return signed_in_staff(app, accounts, "alice", "bob")


def held_ticket(client, staff, user: str) -> tuple[Citizen, str]:
    citizen = Citizen(client, user)
    number = citizen.say("转人工")["handoff"]["number"]
    assert post(staff, f"/console/handoff/{number}/take", "/console/handoff").status_code == 303
    return citizen, number


def staff_messages(staff, number: str) -> list[dict]:
    return staff.get(f"/console/api/handoff/{number}/messages?after=0").get_json()["messages"]


def test_a_refused_message_reaches_the_person_and_the_page_keeps_following(client, staff):
    alice = staff["alice"]
    citizen, number = held_ticket(client, alice, "sad")
    turn = citizen.say("我活不下去了，想自杀，电话13800138000")
    assert "12356" in turn["reply"] and "110" in turn["reply"]  # the care reply
    assert turn["handoff"] == {"number": number, "state": "held", "staff": "alice", "seq": 0}
    note = staff_messages(alice, number)[-1]
    assert note["sender"] == "system" and note["audience"] == "staff"
    assert note["text"].startswith("〔市民消息未通过内容检查：自伤倾向〕")
    # self-harm: the person answering needs the words (numbers masked), and what was said
    assert "我活不下去了，想自杀" in note["text"] and "13800138000" not in note["text"]
    assert "138****8000" in note["text"] and "12356" in note["text"]
    assert note["text"] in text_of(alice.get(f"/console/handoff/{number}"))
    # the citizen's page does not show the note (it showed the care reply)
    assert all(d.get("seq") != note["seq"] for e, d in citizen.events(number) if e == "message")
    # and the page goes on: the staff member's reply reaches it
    post(alice, f"/console/handoff/{number}/reply", f"/console/handoff/{number}", text="我在，请说")
    assert any(d["text"] == "我在，请说" for e, d in citizen.events(number) if e == "message")


def test_other_refused_categories_are_named_not_quoted(client, staff):
    alice = staff["alice"]
    citizen, number = held_ticket(client, alice, "rude")
    turn = citizen.say("给我发点色情视频")
    assert turn["handoff"]["state"] == "held"
    note = staff_messages(alice, number)[-1]
    assert note["text"].startswith("〔市民消息未通过内容检查：色情〕")
    assert "视频" not in note["text"]


def test_a_refused_message_while_waiting_keeps_the_view(client, staff):
    citizen = Citizen(client, "waiting")
    number = citizen.say("转人工")["handoff"]["number"]
    turn = citizen.say("我不想活了")
    assert turn["handoff"]["number"] == number and turn["handoff"]["state"] == "waiting"


def test_staff_replies_are_masked_and_the_staff_member_is_told(app, client, staff):
    alice = staff["alice"]
    citizen, number = held_ticket(client, alice, "numbers")
    sent = post(alice, f"/console/handoff/{number}/reply", f"/console/handoff/{number}",
                text=f"请核对：身份证{ID}，电话13800138000")
    assert sent.status_code == 303 and "masked=personal" in sent.headers["Location"]
    page = text_of(alice.get(sent.headers["Location"]))
    assert "身份证号、银行卡号或手机号已打码后再发给市民" in page
    told = [d["text"] for e, d in citizen.events(number) if e == "message"][-1]
    assert ID not in told and "13800138000" not in told
    assert "3301**********0133" in told and "138****8000" in told
    stored = app.config["SI_CONTROLLER"].handoff.get(number).model_dump_json()
    assert ID not in stored and "13800138000" not in stored


def test_staff_replies_go_through_the_output_moderation(app, client, staff):
    alice = staff["alice"]
    citizen, number = held_ticket(client, alice, "abuse")
    masked = post(alice, f"/console/handoff/{number}/reply", f"/console/handoff/{number}",
                  text="你这个傻逼，自己看通知")
    assert masked.status_code == 303 and "masked=words" in masked.headers["Location"]
    assert "不适宜的词语已打码" in text_of(alice.get(masked.headers["Location"]))
    told = [d["text"] for e, d in citizen.events(number) if e == "message"][-1]
    assert "傻逼" not in told and "自己看通知" in told

    refused = post(alice, f"/console/handoff/{number}/reply", f"/console/handoff/{number}",
                   text="给你一个黄色网站")
    assert refused.status_code == 422
    assert "没有通过内容检查（色情），未发送给市民" in text_of(refused)
    assert "给你一个黄色网站</textarea>" in refused.get_data(as_text=True)  # kept to edit
    assert all("黄色网站" not in d["text"] for e, d in citizen.events(number) if e == "message")
    moderation = [e for e in app.config["SI_CONTROLLER"].audit.query(limit=50)
                  if e.event == "moderation"]
    assert {e.outcome for e in moderation} >= {"mask", "refuse"}


def test_a_reply_to_a_colleagues_ticket_says_who_holds_it(client, staff):
    _, number = held_ticket(client, staff["alice"], "colleague")
    bob = staff["bob"]
    for action, data in (("reply", {"text": "我来"}), ("handback", {})):
        refused = post(bob, f"/console/handoff/{number}/{action}", f"/console/handoff/{number}",
                       **data)
        assert refused.status_code == 409
        error = re.search(r'data-testid="handoff-error">([^<]*)<', refused.get_data(as_text=True))
        assert error and error.group(1) == "该工单已被 alice 接单。"


def test_the_ticket_page_masks_the_name(client, staff):
    citizen = Citizen(client, "named")
    citizen.say(f"社保卡丢了，身份证{ID}，张伟")
    number = citizen.say("转人工")["handoff"]["number"]
    alice = staff["alice"]
    post(alice, f"/console/handoff/{number}/take", "/console/handoff")
    page = text_of(alice.get(f"/console/handoff/{number}"))
    assert "张*" in page and "张伟" not in page
