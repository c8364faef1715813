"""The conversation review: roles and CSRF on every route, the filters, one conversation
turn by turn (masked), marking a turn wrong (audited), and the export as a replay
transcript that replays green with the project's replay."""

from __future__ import annotations

import re

import pytest

from si_agent.audit import StaffAction
from si_agent.cli import demo_backend_hook
from si_agent.config.loader import load_businesses
from si_agent.config.settings import Settings
from si_agent.demo_backend import fail_next
from si_agent.engine.rules import RuleEngine
from si_agent.executor import Executors
from si_agent.flow.controller import Controller
from si_agent.replay import load_dialogues, replay
from si_agent.session import MemoryStore
from tests.console.conftest import PASSWORD, ROOT, Bearer, csrf, sign_in

ID, PHONE, CARD, NAME = "320102198809150628", "13800138005", "6013820800012345672", "陈静"
BENEFIT = ("我失业了，想领失业金", f"身份证 {ID}", NAME, f"手机{PHONE}", "2025年6月30日",
           "被辞退", CARD, "确认")
LOSS_FAILED = ("我的社保卡丢了", "330122196303150178", "张伟", "13800138001", "临时", "确认")
STAFF = Bearer("li", ["staff"])


def say(client, user: str, *texts: str) -> dict:
    auth = client.post("/api/token", json={"user_id": user}).get_json()["access_token"]
    headers = {"Authorization": f"Bearer {auth}"}
    for text in texts:
        turn = client.post("/api/chat", json={"message": text}, headers=headers).get_json()
    turn["headers"] = headers
    return turn


def conversation_ids(page) -> list[str]:
    return re.findall(r'data-conversation="([0-9a-f]+)"', page.get_data(as_text=True))


def only(client) -> str:
    [cid] = conversation_ids(client.get("/console/conversations", headers=STAFF))
    return cid


@pytest.fixture
def replayer(tmp_path):
    settings = Settings(business_dir=ROOT / "businesses", data_dir=tmp_path / "replay")
    catalog = load_businesses(settings.business_dir)
    controller = Controller(catalog, MemoryStore(), RuleEngine(catalog), Executors(settings))

    def run(yaml_text: str):
        path = tmp_path / "exported.yaml"
        path.write_text(yaml_text, "utf-8")
        [(source, transcript)] = load_dialogues([path])
        return replay(controller, transcript, source=source,
                      backend=demo_backend_hook(settings))

    return run


def test_every_route_refuses_citizens_and_strangers(client):
    say(client, "alice", "你好")
    cid = only(client)
    citizen = client.post("/api/token", json={"user_id": "c"}).get_json()["access_token"]
    as_citizen = {"Authorization": f"Bearer {citizen}"}
    for path in ("/console/conversations", f"/console/conversations/{cid}",
                 f"/console/conversations/{cid}/transcript.yaml", "/console/submissions"):
        assert client.get(path, headers=as_citizen).status_code == 403, path
        assert client.get(path).status_code == 303, path  # to the sign-in page
    review = f"/console/conversations/{cid}/turns/1/review"
    assert client.post(review, headers=as_citizen, data={}).status_code in (400, 403)
    assert client.post(review, data={"csrf_token": "x"}).status_code == 400  # CSRF first


def test_marking_needs_the_csrf_token_and_is_audited(client, accounts, app):
    accounts.add("alice", PASSWORD)
    say(client, "citizen", "我要挂失社保卡", "张伟")
    sign_in(client)
    cid = only(client)
    review = f"/console/conversations/{cid}/turns/2/review"
    assert client.post(review, data={"note": "x"}).status_code == 400  # no CSRF token
    page = f"/console/conversations/{cid}"
    answer = client.post(review, data={"csrf_token": csrf(client, page), "action": "mark",
                                       "note": "姓名之前应先问身份证", "expected": "身份证"})
    assert answer.status_code == 303 and answer.headers["Location"].endswith("#turn-2")
    text = client.get(page).get_data(as_text=True)
    assert "已标记为错误（alice" in text and "姓名之前应先问身份证" in text
    audit = app.config["SI_CONTROLLER"].audit.query()
    marked = [e for e in audit if e.action == StaffAction.TURN_MARKED]
    assert marked and marked[0].actor == "alice" and marked[0].target == f"{cid}#2"
    assert client.post(f"/console/conversations/{cid}/turns/9/review",
                       data={"csrf_token": csrf(client, page)}).status_code == 404
    assert client.post(review, data={"csrf_token": csrf(client, page),
                                     "note": "长" * 501}).status_code == 400
    client.post(review, data={"csrf_token": csrf(client, page), "action": "unmark"})
    assert "已标记为错误" not in client.get(page).get_data(as_text=True)
    assert client.get("/console/conversations/nothing0").status_code == 404
    assert client.get("/console/conversations/../../etc").status_code == 404


def test_the_list_filters_and_one_conversation_shows_every_turn_masked(client, settings):
    done = say(client, "alice", *BENEFIT)
    assert done["state"] == "done"
    fail_next(settings.demo_backend_db, 1, status=400)
    failed = say(client, "bob", *LOSS_FAILED)
    assert failed["state"] == "failed"
    asked = say(client, "carol", "生育津贴怎么算的")
    client.post("/api/feedback", json={"turn": 1, "rating": "down", "reason": "没回答"},
                headers=asked["headers"])
    listed = client.get("/console/conversations", headers=STAFF)
    assert listed.status_code == 200 and len(conversation_ids(listed)) == 3
    get = lambda query: conversation_ids(  # noqa: E731
        client.get(f"/console/conversations?{query}", headers=STAFF))
    [benefit] = get("business=unemployment_benefit")
    [loss] = get("outcome=failed")
    [question] = get("unanswered=1")
    assert get("feedback=down") == [question] and get("feedback=up") == []
    assert get("outcome=done") == [benefit] and get("marked=1") == []
    assert len({benefit, loss, question}) == 3
    for bad in ("business=nope", "outcome=nope", "feedback=nope", "since=1x"):
        assert client.get(f"/console/conversations?{bad}", headers=STAFF).status_code == 400

    page = client.get(f"/console/conversations/{benefit}", headers=STAFF)
    text = page.get_data(as_text=True)
    assert text.count('data-testid="turn"') == len(BENEFIT)
    assert "身份证 3201**********0628" in text and "银行卡号=6013***********5672" in text
    assert "match_business" in text and "confirm_submit" in text and "已办结" in text
    for raw in (ID, PHONE, CARD, NAME):
        assert raw not in text, raw
    detail = client.get(f"/console/conversations/{question}", headers=STAFF).get_data(
        as_text=True)
    assert "未答出" in detail and "没帮助：没回答" in detail


def test_an_exported_conversation_replays_green(client, replayer, app):
    say(client, "alice", *BENEFIT)
    cid = only(client)
    exported = client.get(f"/console/conversations/{cid}/transcript.yaml", headers=STAFF)
    assert exported.status_code == 200
    assert exported.headers["Content-Disposition"].startswith("attachment;")
    text = exported.get_data(as_text=True)
    for raw in (PHONE, CARD, NAME, ID):  # demo values, not the citizen's (a demo person
        assert text.count(raw) <= 2     # here, shown at most as typed and as expected)
    report = replayer(text)
    assert report.passed and report.turns == len(BENEFIT), report.failures
    actions = [e.action for e in app.config["SI_CONTROLLER"].audit.query()]
    assert StaffAction.TRANSCRIPT_EXPORTED in actions


def test_real_values_become_demo_values_and_a_failure_fails_again(client, settings, replayer):
    fail_next(settings.demo_backend_db, 1, status=503)
    real = ("我的社保卡丢了", "330106199001011231", "33010619900101123X", "孙小美",
            "13912345678", "临时", "确认")  # the first ID number's check digit is wrong
    assert say(client, "alice", *real)["state"] == "failed"
    text = client.get(f"/console/conversations/{only(client)}/transcript.yaml",
                      headers=STAFF).get_data(as_text=True)
    assert "33010619900101123X" not in text and "孙小美" not in text
    assert "330106199001011231" not in text
    assert "330122196303150178" in text and "张伟" in text  # the first demo person
    assert "fail_next: 1" in text and "原对话中提交失败" in text
    report = replayer(text)
    assert report.passed, report.failures


def test_a_turn_marked_wrong_becomes_a_failing_regression_test(client, accounts, replayer):
    accounts.add("alice", PASSWORD)
    say(client, "citizen", "我要挂失社保卡", "张伟")
    sign_in(client)
    cid = only(client)
    page = f"/console/conversations/{cid}"
    client.post(f"{page}/turns/2/review", data={
        "csrf_token": csrf(client, page), "note": "应先核对身份证",
        "expected": "这句话现在的回复里没有"})
    text = client.get(f"{page}/transcript.yaml").get_data(as_text=True)
    assert "# 审核标记为错误（alice）：应先核对身份证" in text
    report = replayer(text)
    assert not report.passed and len(report.failures) == 1
    assert report.failures[0].startswith("turn 2") and "这句话现在的回复里没有" in \
        report.failures[0]


def test_an_unanswered_question_becomes_a_curated_answer_from_its_turn(client, app):
    import html

    asked = say(client, "dora", "生育津贴怎么算的")
    assert "生育津贴按" not in asked["reply"]
    page = client.get(f"/console/conversations/{only(client)}", headers=STAFF).get_data(
        as_text=True)
    link = html.unescape(re.search(r'<a href="([^"]+)" data-testid="to-curated"', page).group(1))
    form = client.get(link, headers=STAFF)
    text = html.unescape(form.get_data(as_text=True))
    assert form.status_code == 200 and 'value="生育津贴怎么算的"' in text
    assert 'value="对话审核"' in text  # the source says where it came from; nothing saved yet
    assert app.config["SI_CONTROLLER"].knowledge.book.all() == []
    saved = client.post("/console/curated/new", headers=STAFF, data={
        "csrf_token": csrf(client, "/console/curated/new", headers=STAFF),
        "question": "生育津贴怎么算的", "answer": "生育津贴按用人单位上年度职工月平均工资计发。",
        "source": "对话审核", "as_of": "2026-12"})
    assert saved.status_code == 303, saved.get_data(as_text=True)[:300]
    again = say(client, "erin", "生育津贴怎么算的")
    assert "生育津贴按用人单位上年度职工月平均工资计发" in again["reply"]


def test_moderated_messages_and_replies_are_listed_shown_and_counted(client):
    say(client, "fay", "你们这帮骗子", "我想约炮", "网上有人说百家乐能赚钱", "我要转社保")
    say(client, "gus", "我要转社保")  # nothing to do with the moderation
    [cid] = conversation_ids(client.get("/console/conversations?moderated=1", headers=STAFF))
    assert len(conversation_ids(client.get("/console/conversations", headers=STAFF))) == 2
    page = client.get(f"/console/conversations/{cid}", headers=STAFF).get_data(as_text=True)
    shown = page.split('data-testid="conversation-moderation"', 1)[1].split("</dd>", 1)[0]
    assert "市民消息被拒绝（色情）" in shown and "市民消息被标记（赌博）" in shown
    assert "约炮" not in page  # a refused message is never kept
    analytics = client.get("/console/analytics", headers=STAFF).get_data(as_text=True)
    counted = analytics.split('data-testid="moderation"', 1)[1].split("</p>", 1)[0]
    assert "1 段对话" in counted and "市民消息被拒绝 1 次" in counted
    assert "市民消息被标记 1 次" in counted and "色情 1" in counted and "赌博 1" in counted
