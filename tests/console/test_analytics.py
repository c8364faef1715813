"""The analytics screen counts a scripted set of dialogues exactly: the funnel per
business, where conversations ended, re-asks, unanswered questions, ratings; staff only."""

from __future__ import annotations

import re

from si_agent.demo_backend import fail_next
from si_agent.turns.analytics import percentile
from tests.console.conftest import Bearer

STAFF = Bearer("li", ["staff"])
LOSS = ("我的社保卡丢了", "330122196303150178", "张伟", "13800138001", "临时", "确认")


def say(client, user: str, *texts: str) -> dict:
    auth = client.post("/api/token", json={"user_id": user}).get_json()["access_token"]
    headers = {"Authorization": f"Bearer {auth}"}
    for text in texts:
        turn = client.post("/api/chat", json={"message": text}, headers=headers).get_json()
    turn["headers"] = headers
    return turn


def cells(page, business: str) -> dict[str, str]:
    text = page.get_data(as_text=True)
    row = text.split(f'data-business="{business}"', 1)[1].split("</tr>", 1)[0]
    found = dict(re.findall(r'data-(?:step|ending)="(\w+)">([^<]*)<', row))
    return {k: v.strip() for k, v in found.items()}


def test_the_funnel_counts_a_scripted_set_of_dialogues_exactly(client, settings):
    assert say(client, "a", *LOSS)["state"] == "done"
    assert say(client, "b", *LOSS)["state"] == "done"
    fail_next(settings.demo_backend_db, 1, status=400)
    assert say(client, "c", *LOSS)["state"] == "failed"
    say(client, "d", "我的社保卡丢了", "330122196303150178", "算了不办了")  # cancelled at 姓名
    say(client, "e", "我的社保卡丢了", "张伟", "我要找人工")  # a refused ID, then a person
    rated = say(client, "f", "生育津贴怎么算的")
    client.post("/api/feedback", json={"turn": 1, "rating": "down"}, headers=rated["headers"])
    page = client.get("/console/analytics", headers=STAFF)
    assert page.status_code == 200
    assert cells(page, "card_loss") == {
        "started": "5", "fields_given": "3", "confirmed": "3", "submitted": "3", "done": "2",
        "cancelled": "姓名：1", "handed_off": "身份证号：1", "failed": "确认：1"}
    text = page.get_data(as_text=True)
    assert "社保卡挂失·身份证号</td><td class=\"num\">4</td><td class=\"num\">1<" in text
    assert "生育津贴怎么算的（1 次）" in text and "有帮助 0 · 没帮助 1" in text
    for raw in ("330122196303150178", "张伟", "13800138001"):
        assert raw not in text
    csv = client.get("/console/analytics.csv", headers=STAFF).get_data(as_text=True)
    assert csv.splitlines()[1].startswith("card_loss,社保卡挂失,5,3,3,3,2,1,1,1")


def test_staff_only_and_bad_period(client):
    citizen = client.post("/api/token", json={"user_id": "c"}).get_json()["access_token"]
    for path in ("/console/analytics", "/console/analytics.csv"):
        assert client.get(path, headers={"Authorization": f"Bearer {citizen}"}).status_code \
            == 403
        assert client.get(path).status_code == 303
    assert client.get("/console/analytics?since=soon", headers=STAFF).status_code == 400


def test_percentiles():
    assert percentile([], .5) is None
    assert percentile([5], .95) == 5
    assert percentile(list(range(1, 101)), .5) == 50
    assert percentile(list(range(1, 101)), .95) == 95


def test_a_csv_cell_that_excel_would_run_is_text():
    from si_agent.server.console.analytics import _cell

    assert _cell('=HYPERLINK("http://evil","x")') == '\'=HYPERLINK("http://evil","x")'
    assert _cell("+cmd|' /C calc'!A0").startswith("'+") and _cell("@SUM(1)") == "'@SUM(1)"
    assert _cell("社保卡挂失") == "社保卡挂失" and _cell("card_loss") == "card_loss"


def test_turns_model_calls_and_tokens_per_day_and_refused_questions():
    from datetime import datetime, timezone

    from si_agent.turns.analytics import report
    from si_agent.turns.log import Conversation, TurnView
    from si_agent.turns.model import KnowledgeAsk, TurnEvent

    def turn(day: int, n: int, calls: int, tokens: int) -> TurnView:
        return TurnView(event=TurnEvent(
            conversation="c1", user="u", turn=n, state_before="idle", state_after="idle",
            at=datetime(2026, 12, day, 9, tzinfo=timezone.utc), model_calls=calls,
            prompt_tokens=tokens, completion_tokens=1))

    views = [turn(5, 1, 1, 100), turn(5, 2, 0, 0), turn(6, 3, 2, 300)]
    c = Conversation(id="c1", user="u", started=views[0].event.at, ended=views[-1].event.at,
                     turns=views)
    days = [(d.day, d.turns, d.model_calls, d.tokens) for d in report([c]).days]
    assert days == [("2026-12-05", 2, 1, 102), ("2026-12-06", 1, 2, 301)]
    views[1].event.knowledge = [KnowledgeAsk(question="我邻居的养老金是多少", outcome="refused"),
                                KnowledgeAsk(question="生育津贴怎么算", outcome="unanswered")]
    numbers = report([c])
    assert numbers.refused == [("我邻居的养老金是多少", 1)]
    assert numbers.unanswered == [("生育津贴怎么算", 1)]
