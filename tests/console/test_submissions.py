"""The console's list of submissions and outcomes (/console/submissions), from real dialogues through the API."""

from __future__ import annotations

import html
import re

from si_agent.demo_backend import fail_next
from tests.console.conftest import token

ID = "330122196303150178"
NAME = "张伟"
TRANSFER = ("我要转社保", "从杭州转到苏州", ID, NAME, "确认")


def say(client, user: str, *texts: str) -> dict:
    auth = client.post("/api/token", json={"user_id": user}).get_json()["access_token"]
    for text in texts:
        turn = client.post(
            "/api/chat", json={"message": text}, headers={"Authorization": f"Bearer {auth}"}
        ).get_json()
    return turn


def rows(page) -> list[str]:
    """The table's rows, as their text with tags and spaces squeezed out."""
    text = html.unescape(page.get_data(as_text=True))
    body = text.split("<tbody>", 1)[1].split("</tbody>", 1)[0] if "<tbody>" in text else ""
    return [
        re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", r)).strip()
        for r in body.split("</tr>")
        if r.strip()
    ]


def test_submissions_are_listed_masked_and_filtered(client, settings):
    staff = {"Authorization": f"Bearer {token('li', ['staff'])}"}
    done = say(client, "alice", *TRANSFER)
    assert done["state"] == "done"
    number = done["result"]["application_no"]
    fail_next(settings.demo_backend_db, 1, status=400)
    failed = say(client, "bob", *TRANSFER)
    assert failed["state"] == "failed"

    page = client.get("/console/submissions", headers=staff)
    assert page.status_code == 200
    listed = rows(page)
    assert len(listed) == 2
    newest, oldest = listed
    assert "社保关系转移" in newest and "办理失败" in newest
    assert "社保关系转移" in oldest and "已办结" in oldest and number in oldest and "http" in oldest
    assert (
        "身份证号=3301**********0178" in oldest
        and "姓名=张*" in oldest
        and "转入城市=苏州市" in oldest
    )
    text = page.get_data(as_text=True)
    assert ID not in text and NAME not in text and "alice" not in text
    user = client.application.config["SI_CONTROLLER"].audit.user_ref("alice")
    assert user[:8] in oldest and user not in text  # the keyed hash, shortened

    only_failed = rows(client.get("/console/submissions?outcome=failed", headers=staff))
    assert only_failed == [newest]
    other = client.get("/console/submissions?business=card_loss", headers=staff)
    assert 'data-testid="no-submissions"' in other.get_data(as_text=True)
    assert client.get("/console/submissions?since=1x", headers=staff).status_code == 400
    assert client.get("/console/submissions?outcome=nope", headers=staff).status_code == 400


def test_the_list_is_for_staff_only(client):
    citizen = client.post("/api/token", json={"user_id": "c"}).get_json()["access_token"]
    page = client.get("/console/submissions", headers={"Authorization": f"Bearer {citizen}"})
    assert page.status_code == 403
    assert client.get("/console/submissions").status_code == 303
