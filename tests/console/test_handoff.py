"""The hand-off queue through the real app: a citizen asks for a person over the API,
staff take, answer and hand back in the console, the citizen's page follows on SSE."""

from __future__ import annotations

import html
import json
import re
import time

import pytest

from si_agent.audit import StaffAction
from si_agent.server.handoff import follow
from si_agent.turns.model import Moderation
from tests.console.conftest import PASSWORD, console_settings, csrf, sign_in, token

ID = "330102199503080133"


@pytest.fixture
def settings(tmp_path):
    return console_settings(tmp_path, handoff_hours="always")


def signed_in_staff(app, accounts, *names: str) -> dict:
    """Staff members signed in, each in their own browser (client), by name."""
    clients = {}
    for name in names:
        accounts.add(name, PASSWORD)
        client = app.test_client()
        assert sign_in(client, name).status_code == 303
        clients[name] = client
    return clients


@pytest.fixture
def staff(app, accounts):
    """Two staff members signed in, each in their own browser (client)."""
    return signed_in_staff(app, accounts, "gh1024", "gh2048")


class Citizen:
    def __init__(self, client, user: str) -> None:
        self.client = client
        auth = client.post("/api/token", json={"user_id": user}).get_json()["access_token"]
        self.headers = {"Authorization": f"Bearer {auth}"}

    def say(self, text: str) -> dict:
        response = self.client.post("/api/chat", json={"message": text}, headers=self.headers)
        assert response.status_code == 200, response.get_data(as_text=True)
        return response.get_json()

    def events(self, number: str, after: int = 0) -> list[tuple[str, dict]]:
        response = self.client.get(f"/api/session/handoff/events?ticket={number}&after={after}",
                                   headers=self.headers)
        assert response.status_code == 200
        found = []
        for block in response.get_data(as_text=True).split("\n\n"):
            lines = dict(line.split(": ", 1) for line in block.splitlines()
                         if not line.startswith(":"))
            if "event" in lines:
                found.append((lines["event"], json.loads(lines["data"])))
        return found


def post(client, path: str, page: str, **data):
    return client.post(path, data={"csrf_token": csrf(client, page), **data})


def text_of(response) -> str:
    return html.unescape(re.sub(r"<[^>]+>", " ", response.get_data(as_text=True)))


def test_a_whole_handoff_and_back(app, client, staff):
    citizen = Citizen(client, "citizen-1")
    citizen.say(f"社保卡丢了，身份证{ID}，刘洋")
    first = citizen.say("转人工")
    number = first["handoff"]["number"]
    assert "目前没有人工客服在线" in first["reply"] and number in first["reply"]
    assert "12333社保服务热线" in first["reply"] and "稍候" not in first["reply"]

    a, b = staff["gh1024"], staff["gh2048"]
    queue = a.get("/console/handoff")  # at the queue from now on
    assert queue.status_code == 200
    page = text_of(queue)
    assert number in page and "社保卡挂失" in page and "要求人工" in page and "排队中" in page
    assert re.search(r"\d+分\d\d秒", page)  # waiting time

    later = Citizen(client, "citizen-2").say("人工")
    assert "人工客服接入后会在这里回复您" in later["reply"] and "第2位" in later["reply"]

    taken = post(a, f"/console/handoff/{number}/take", "/console/handoff")
    assert taken.status_code == 303
    refused = post(b, f"/console/handoff/{number}/take", "/console/handoff")
    assert refused.status_code == 409 and "该工单已被 gh1024 接单" in text_of(refused)

    ticket_page = text_of(a.get(f"/console/handoff/{number}"))
    assert "3301**********0133" in ticket_page and ID not in ticket_page
    assert "社保卡挂失" in ticket_page

    said = citizen.say(f"卡丢在公交上了，身份证{ID}")
    assert said["reply"] == "" and said["handoff"]["state"] == "held"
    assert said["handoff"]["staff"] == "gh1024" and said["awaiting"] == "phone"
    seen = a.get(f"/console/api/handoff/{number}/messages?after=1").get_json()
    assert [m["sender"] for m in seen["messages"]] == ["citizen"]
    assert "卡丢在公交上了" in seen["messages"][0]["text"] and ID not in json.dumps(seen)

    replied = post(a, f"/console/handoff/{number}/reply", f"/console/handoff/{number}",
                   text="您好，已为您登记，稍后继续办理即可")
    assert replied.status_code == 303
    assert post(b, f"/console/handoff/{number}/reply", f"/console/handoff/{number}",
                text="不是我的").status_code == 409
    assert post(a, f"/console/handoff/{number}/handback",
                f"/console/handoff/{number}").status_code == 303

    events = citizen.events(number)
    messages = [d for e, d in events if e == "message"]
    assert [m["sender"] for m in messages] == ["system", "citizen", "staff", "system"]
    assert messages[0]["text"] == "人工客服已接入（工号gh1024），请问有什么可以帮您？"
    assert messages[2]["text"] == "您好，已为您登记，稍后继续办理即可"
    assert [d["state"] for e, d in events if e == "status"][-1] == "closed"
    assert [e for e, _ in citizen.events(number, after=4)] == ["status"]  # nothing missed

    back = citizen.say("13800138000")  # the assistant again, where the business was
    assert back["handoff"] is None and back["awaiting"] == "loss_type"

    actions = [(e.actor, e.action, e.target, e.outcome)
               for e in app.config["SI_CONTROLLER"].audit.query(limit=50) if e.event == "staff"]
    assert ("gh1024", StaffAction.HANDOFF_TAKEN, number, "succeeded") in actions
    assert ("gh2048", StaffAction.HANDOFF_TAKEN, number, "refused") in actions
    assert ("gh1024", StaffAction.HANDOFF_REPLIED, number, "succeeded") in actions
    assert ("gh1024", StaffAction.HANDOFF_HANDED_BACK, number, "succeeded") in actions


def test_a_staff_page_that_dies_returns_the_ticket_to_the_queue(app, client, staff):
    desk = app.config["SI_CONTROLLER"].handoff
    desk.lease = 0.6
    citizen = Citizen(client, "citizen-3")
    number = citizen.say("我要投诉")["handoff"]["number"]
    a, b = staff["gh1024"], staff["gh2048"]
    post(a, f"/console/handoff/{number}/take", "/console/handoff")
    assert a.post(f"/console/api/handoff/{number}/renew",
                  headers={"X-CSRFToken": csrf(a, "/console/handoff")}).status_code == 200
    time.sleep(0.8)  # no renewal: the page died
    assert citizen.say("还在吗")["handoff"]["state"] == "waiting"
    lost = a.post(f"/console/api/handoff/{number}/renew",
                  headers={"X-CSRFToken": csrf(a, "/console/handoff")})
    assert lost.status_code == 409 and lost.get_json()["error"]["code"] == "not_held"
    assert post(b, f"/console/handoff/{number}/take", "/console/handoff").status_code == 303
    closed = post(b, f"/console/handoff/{number}/close", f"/console/handoff/{number}",
                  outcome="resolved")
    assert closed.status_code == 303
    assert desk.get(number).outcome.value == "resolved"
    told = [d["text"] for e, d in citizen.events(number) if e == "message"]
    assert told[0].endswith("（工号gh1024），请问有什么可以帮您？")
    assert told[1].endswith("（工号gh2048），请问有什么可以帮您？")
    assert told[-1] == f"人工客服已结束本次服务（工单号{number}）。还有什么可以帮您？"


def test_staff_signed_out_or_removed_are_no_longer_at_the_queue(app, client, staff, tmp_path):
    """Signing out (or the account removed, its password changed) ends presence at once,
    as 离开队列 does: the next citizen is not told a person is coming."""
    a = staff["gh1024"]
    assert a.get("/console/handoff").status_code == 200  # at the queue
    desk = app.config["SI_CONTROLLER"].handoff
    assert desk.present() == ["gh1024"]
    assert a.post("/console/logout", data={"csrf_token": csrf(a, "/console/")}).status_code \
        == 200
    assert desk.present() == []
    told = Citizen(client, "citizen-9").say("人工")["reply"]
    assert "目前没有人工客服在线" in told and "人工客服接入后" not in told


def test_what_the_moderation_did_during_a_hand_off_is_reviewed(app, client, staff):
    """A citizen's message to the person and the person's replies, masked, flagged or
    refused, are moderation records of the conversation (the review's filter, analytics)."""
    citizen = Citizen(client, "citizen-10")
    citizen.say("我要转社保")
    number = citizen.say("人工")["handoff"]["number"]
    a = staff["gh1024"]
    assert post(a, f"/console/handoff/{number}/take", "/console/handoff").status_code == 303
    citizen.say("网上有人说百家乐能赚钱")  # flagged, goes to the person
    refused = post(a, f"/console/handoff/{number}/reply", f"/console/handoff/{number}",
                   text="我想约炮")
    assert refused.status_code == 422
    log = app.config["SI_CONTROLLER"].turns
    session = app.config["SI_CONTROLLER"].store.load("citizen-10")
    records = log.store.conversation(log.conversation_of("citizen-10", session.started_at))
    marks = sorted((r.where, r.action) for r in records if isinstance(r, Moderation))
    assert marks == [("input", "flag"), ("output", "refuse")]


def test_a_page_that_was_away_when_the_lease_ran_out_is_told_too(app, client, staff):
    """A stream opened after the person's lease ran out (a page loaded again, a poll, a
    reconnect) says the connection ended, as the stream that saw it happen does."""
    desk = app.config["SI_CONTROLLER"].handoff
    desk.lease = 0.5
    citizen = Citizen(client, "citizen-11")
    number = citizen.say("人工")["handoff"]["number"]
    post(staff["gh1024"], f"/console/handoff/{number}/take", "/console/handoff")
    seen = max(m.seq for m in desk.get(number).messages)
    time.sleep(0.7)  # no renewal: the staff page died
    # (the stream's own function, for a second: the route's follows for minutes)
    events = "".join(follow(desk, desk.get(number), seen, "12333", seconds=0.2))
    status = json.loads(events.split("event: status\ndata: ", 1)[1].split("\n", 1)[0])
    assert status["state"] == "waiting" and "人工客服的连接中断了" in (status["text"] or "")
    # A stream that finds the ticket waiting without a lapse says nothing of the kind.
    fresh = Citizen(client, "citizen-12").say("人工")["handoff"]["number"]
    events = "".join(follow(desk, desk.get(fresh), 0, "12333", seconds=0.2))
    assert "连接中断" not in events


def test_citizens_tokens_and_forged_posts_are_refused(app, client, staff):
    number = Citizen(client, "citizen-4").say("人工")["handoff"]["number"]
    citizen_token = {"Authorization": f"Bearer {token('citizen-4')}"}
    assert client.get("/console/handoff", headers=citizen_token).status_code == 403
    assert client.get(f"/console/api/handoff/{number}/messages",
                      headers=citizen_token).status_code == 403
    assert client.post(f"/console/handoff/{number}/take", headers=citizen_token).status_code \
        in (400, 403)
    no_csrf = staff["gh1024"].post(f"/console/handoff/{number}/take")
    assert no_csrf.status_code == 400
    assert app.config["SI_CONTROLLER"].handoff.get(number).holder is None
    other = Citizen(client, "citizen-5")
    assert other.client.get(f"/api/session/handoff/events?ticket={number}",
                            headers=other.headers).status_code == 404
    assert other.client.get("/api/session/handoff/events?ticket=x",
                            headers=other.headers).status_code == 400


def test_outside_office_hours_nobody_is_promised(tmp_path):
    from si_agent.server import create_app

    app = create_app(console_settings(tmp_path, handoff_hours="never"))
    app.config["SI_CONTROLLER"].handoff.beat("gh1024")  # even with someone signed in
    reply = Citizen(app.test_client(), "late").say("转人工")["reply"]
    assert "现在不是人工服务时间" in reply and "H" in reply and "12333社保服务热线" in reply


def test_a_closing_note_is_kept_masked(app, client, staff):
    number = Citizen(client, "citizen-6").say("人工")["handoff"]["number"]
    a = staff["gh1024"]
    post(a, f"/console/handoff/{number}/take", "/console/handoff")
    closed = post(a, f"/console/handoff/{number}/close", f"/console/handoff/{number}",
                  outcome="callback", note=f"已约回电，身份证{ID}，电话13800138000")
    assert closed.status_code == 303
    note = app.config["SI_CONTROLLER"].handoff.get(number).note
    assert note is not None and "已约回电" in note
    assert ID not in note and "13800138000" not in note and "3301**********0133" in note


def test_a_knowledge_answer_goes_into_the_reply_box_to_check_and_send(app, client, staff):
    from si_agent.curated import Draft

    book = app.config["SI_CONTROLLER"].knowledge.book
    book.add(Draft(question="社保卡丢了补办要多少钱", answer="首次补办免费，再次补办收取工本费。",
                   source="市人社局常见问题", as_of="2025-06-01"), "li")
    citizen = Citizen(client, "citizen-k")
    number = citizen.say("转人工")["handoff"]["number"]
    a = staff["gh1024"]
    a.get("/console/handoff")
    post(a, f"/console/handoff/{number}/take", "/console/handoff")
    page = f"/console/handoff/{number}"
    found = post(a, f"/console/handoff/{number}/knowledge", page, question="请问社保卡丢了补办要多少钱？")
    shown = found.get_data(as_text=True)
    assert found.status_code == 200 and "已将知识库的答案放入回复框" in shown
    box = re.search(r'<textarea id="reply-text"[^>]*>(.*?)</textarea>', shown, re.S).group(1)
    assert "首次补办免费" in html.unescape(box) and "市人社局常见问题" in html.unescape(box)
    sent = a.get(f"/console/api/handoff/{number}/messages?after=0").get_json()["messages"]
    assert not [m for m in sent if m["sender"] == "staff" and "首次补办免费" in m["text"]]
    assert book.all()[0].hits == 0  # staff looking up is no citizen's question
    none = post(a, f"/console/handoff/{number}/knowledge", page, question="火星上怎么交社保")
    assert none.status_code == 404 and "知识库没有找到" in text_of(none)
    assert post(a, f"/console/handoff/{number}/knowledge", page, question=" ").status_code == 400


def test_staff_give_a_value_for_the_citizen_checked_told_and_audited(app, client, staff):
    citizen = Citizen(client, "citizen-f")
    citizen.say(f"社保卡丢了，身份证{ID}，刘洋")
    number = citizen.say("转人工")["handoff"]["number"]
    a, b = staff["gh1024"], staff["gh2048"]
    a.get("/console/handoff")
    post(a, f"/console/handoff/{number}/take", "/console/handoff")
    page = f"/console/handoff/{number}"
    assert 'data-testid="field-form"' in a.get(page).get_data(as_text=True)

    bad = post(a, f"/console/handoff/{number}/field", page, field="phone", value="12345")
    assert bad.status_code == 400 and "“手机号码”未通过校验" in text_of(bad)
    assert post(b, f"/console/handoff/{number}/field", page, field="phone",
                value="13800138001").status_code == 409  # not b's ticket
    session = app.config["SI_CONTROLLER"].load("citizen-f")
    assert session.fields["phone"].status != "collected"

    done = post(a, f"/console/handoff/{number}/field", page, field="phone", value="13800138001")
    assert done.status_code == 200 and "已代市民填写“手机号码”：138****8001" in text_of(done)
    session = app.config["SI_CONTROLLER"].load("citizen-f")
    assert session.fields["phone"].value == "13800138001"
    assert session.fields["phone"].status == "collected" and session.awaiting == "loss_type"
    history = client.get("/api/session/history", headers=citizen.headers).get_data(as_text=True)
    assert "13800138001" not in history

    post(a, f"/console/handoff/{number}/handback", page)  # (the stream ends with the ticket)
    told = [d for e, d in citizen.events(number) if e == "message" and d["sender"] == "staff"]
    assert told[-1]["text"] == "我已为您填写“手机号码”：138****8001。"
    assert citizen.say("挂失")["awaiting"] != "phone"  # the business went on from there
    entries = [e for e in app.config["SI_CONTROLLER"].audit.query(limit=80)
               if e.event == "staff" and e.action == StaffAction.HANDOFF_FIELD_SET]
    assert [(e.actor, e.target, e.detail, e.outcome) for e in entries] == [
        ("gh1024", number, "phone", "succeeded")]
    assert "13800138001" not in json.dumps([e.model_dump(mode="json") for e in entries])
    from si_agent.turns.export import ExportRefused, to_transcript

    controller = app.config["SI_CONTROLLER"]
    (conversation,) = [c for c in controller.turns.recent()
                       if any(t.event.channel == "staff" for t in c.turns)]
    with pytest.raises(ExportRefused, match="人工客服代为填写"):
        to_transcript(conversation, controller.catalog)
