"""``POST /api/feedback``: a citizen's 👍/👎 on a reply, stored with its turn; bad input is
a 400 with a Chinese message, never a 500."""

from __future__ import annotations

import pytest


def chat(client, headers, text: str) -> dict:
    return client.post("/api/chat", json={"message": text}, headers=headers).get_json()


def test_a_rating_is_stored_with_its_turn(client, app, login):
    headers = login("alice")
    chat(client, headers, "我要挂失社保卡")
    turn = chat(client, headers, "我叫张伟")["turn"]
    answer = client.post("/api/feedback", json={"turn": turn, "rating": "down",
                                                "reason": "身份证330122196303150178输错了"},
                         headers=headers)
    assert answer.status_code == 200, answer.get_json()
    assert answer.get_json() == {"turn": turn, "rating": "down", "saved": True}
    turns = app.config["SI_CONTROLLER"].turns
    [conversation] = turns.recent()
    rated = conversation.turn(turn)
    assert rated.feedback.rating == "down"
    assert rated.feedback.reason == "身份证3301**********0178输错了"
    again = client.post("/api/feedback", json={"turn": turn, "rating": "up"}, headers=headers)
    assert again.status_code == 200
    assert turns.recent()[0].turn(turn).feedback.rating == "up"  # the newest counts


@pytest.mark.parametrize("body,code", [
    ({"turn": 1, "rating": "meh"}, "invalid_rating"),
    ({"turn": 1}, "invalid_rating"),
    ({"turn": 0, "rating": "up"}, "invalid_feedback_turn"),
    ({"turn": "1", "rating": "up"}, "invalid_feedback_turn"),
    ({"turn": True, "rating": "up"}, "invalid_feedback_turn"),
    ({"turn": 99, "rating": "up"}, "invalid_feedback_turn"),
    ({"turn": 1, "rating": "down", "reason": 5}, "feedback_reason_not_text"),
    ({"turn": 1, "rating": "down", "reason": "太" * 201}, "feedback_reason_too_long"),
])
def test_bad_input_is_a_clear_400(client, login, body, code):
    headers = login("bob")
    chat(client, headers, "你好")
    answer = client.post("/api/feedback", json=body, headers=headers)
    assert answer.status_code == 400, answer.get_json()
    error = answer.get_json()["error"]
    assert error["code"] == code
    assert any("\u4e00" <= ch <= "\u9fff" for ch in error["message"])  # Chinese


def test_a_lone_surrogate_in_the_reason_is_a_400(client, login):
    headers = {**login("dave"), "Content-Type": "application/json"}
    chat(client, login("dave"), "你好")
    answer = client.post("/api/feedback", headers=headers,
                         data='{"turn": 1, "rating": "down", "reason": "\\ud800"}')
    assert answer.status_code == 400
    assert answer.get_json()["error"]["code"] == "invalid_characters"


def test_no_conversation_no_token_no_json(client, login):
    headers = login("carol")
    assert client.post("/api/feedback", json={"turn": 1, "rating": "up"},
                       headers=headers).status_code == 400  # nothing said yet
    assert client.post("/api/feedback", json={"turn": 1, "rating": "up"}).status_code == 401
    assert client.post("/api/feedback", data="up", headers=headers).status_code == 415
    answer = client.post("/api/feedback", data="[1]", headers={**headers,
                         "Content-Type": "application/json"})
    assert answer.status_code == 400


def test_another_citizens_turn_cannot_be_rated(client, app, login):
    alice, bob = login("alice"), login("bob")
    chat(client, alice, "我要挂失社保卡")
    chat(client, alice, "我叫张伟")
    chat(client, bob, "你好")
    assert client.post("/api/feedback", json={"turn": 2, "rating": "down"},
                       headers=bob).status_code == 400
    conversations = app.config["SI_CONTROLLER"].turns.recent()
    assert all(t.feedback is None for c in conversations for t in c.turns)
