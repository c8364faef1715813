"""A consultation through the HTTP API: the turn object's groups, resuming by
group_id after a restart (a new app on the same store), and the reset."""

from __future__ import annotations

import time

import pytest

from si_agent.config.settings import Settings
from si_agent.server import create_app
from tests.server.conftest import ROOT

RUN = time.time_ns()  # one Redis key space per test run, shared by a test's apps


def _settings(tmp_path, store: str) -> Settings:
    return Settings(business_dir=ROOT / "businesses", knowledge="none", data_dir=tmp_path,
                    session_store=store, rate_limit="1000 per minute",
                    redis_prefix=f"si-consult-{tmp_path.name}-{RUN}:")


class Api:
    def __init__(self, settings: Settings, user: str) -> None:
        self.client = create_app(settings).test_client()
        self.login(user)

    def login(self, user: str) -> None:
        token = self.client.post("/api/token", json={"user_id": user}).get_json()["access_token"]
        self.headers = {"Authorization": f"Bearer {token}"}

    def chat(self, message: str, **extra) -> dict:
        response = self.client.post("/api/chat", json={"message": message, **extra},
                                    headers=self.headers)
        assert response.status_code == 200, response.get_json()
        return response.get_json()


def _fields(turn: dict) -> dict[str, dict]:
    return {f["key"]: f for f in turn["fields"]}


def test_fields_carry_their_theme_and_skipped_slots(tmp_path):
    api = Api(_settings(tmp_path, "memory"), "alice")
    turn = api.chat("我想咨询保险")
    assert turn["theme"] == {"id": "get_policyholder_basic", "label": "投保人基本信息"}
    assert {f["group"] for f in turn["fields"]} == {
        "投保人基本信息", "家庭结构", "需求与偏好", "已有保障", "健康告知", "补充说明"}
    turn = api.chat("45岁，收入不想说")
    fields = _fields(turn)
    assert fields["age"]["value"] == "45岁" and fields["age"]["status"] == "collected"
    assert fields["income_range"]["status"] == "skipped"
    assert fields["occupation"]["status"] == "pending"
    assert turn["theme"]["id"] == "get_policyholder_basic"
    assert "还得辛苦您补充一下：职业" in turn["reply"]


@pytest.mark.parametrize("store", ["sqlite", "redis"])
def test_a_conversation_resumes_by_group_id_after_a_restart(tmp_path, store):
    first = Api(_settings(tmp_path, store), "alice")
    first.chat("我想咨询保险", group_id="conv-42")
    first.chat("40岁，中学老师，年收入不到十万")
    first.chat("是的，有一个孩子")
    # Another conversation of the same user: conv-42 stays stored as it was.
    turn = first.chat("你好", group_id="conv-43")
    assert turn["state"] == "idle" and turn["business"] is None
    first.chat("我想咨询保险")
    first.chat("25岁")

    # A restart: a new app on the same store; the user comes back to conv-42.
    second = Api(_settings(tmp_path, store), "alice")
    turn = second.chat("继续", group_id="conv-42")
    assert turn["state"] == "collecting", turn["reply"]
    assert turn["business"]["id"] == "insurance_consult"
    assert turn["reply"].startswith("已为您恢复之前的咨询进度。")
    assert "再聊聊您的需求" in turn["reply"]  # the current theme, asked again
    assert "没有理解" not in turn["reply"] and "收到反馈" not in turn["reply"]
    fields = _fields(turn)
    assert fields["age"]["value"] == "40岁"
    assert fields["income_range"]["value"] == "10万以下"
    assert fields["children_count"]["value"] == "1个"
    assert turn["theme"]["id"] == "get_insurance_demand"
    # ... and to conv-43, which has its own slots.
    turn = second.chat("继续", group_id="conv-43")
    assert _fields(turn)["age"]["value"] == "25岁"
    assert turn["theme"]["id"] == "get_policyholder_basic"

    # 重新开始: the session and the profile of its conversation go.
    reset = second.client.delete("/api/session", headers=second.headers)
    assert reset.status_code == 200 and reset.get_json()["state"] == "idle"
    # The token used to reset is revoked (issue 23.5); the page gets a new one.
    stale = second.client.post("/api/chat", json={"message": "你好"}, headers=second.headers)
    assert stale.get_json()["error"]["code"] == "token_revoked"
    second.login("alice")
    turn = second.chat("你好", group_id="conv-43")
    assert turn["state"] == "idle" and turn["business"] is None


def test_a_group_id_names_only_the_users_own_conversation(tmp_path):
    alice = Api(_settings(tmp_path, "sqlite"), "alice")
    alice.chat("我想咨询保险", group_id="shared-name")
    alice.chat("40岁，教师，年薪15万")
    for group_id in ("shared-name", "alice"):  # alice's group, and her default one
        mallory = Api(_settings(tmp_path, "sqlite"), "mallory")
        turn = mallory.chat("继续", group_id=group_id)
        assert turn["state"] == "idle" and "40岁" not in turn["reply"]
        mallory.client.delete("/api/session", headers=mallory.headers)
    turn = alice.chat("两个孩子")
    assert _fields(turn)["age"]["value"] == "40岁"
    assert _fields(turn)["children_count"]["value"] == "2个"


@pytest.mark.parametrize("group_id", ["", "a b", "x" * 65, "中文", 42, ["g"]])
def test_a_malformed_group_id_is_refused_in_chinese(tmp_path, group_id):
    api = Api(_settings(tmp_path, "memory"), "dave")
    response = api.client.post("/api/chat", json={"message": "你好", "group_id": group_id},
                               headers=api.headers)
    assert response.status_code == 400
    error = response.get_json()["error"]
    assert error["code"] == "invalid_group_id" and "会话编号" in error["message"]


def test_the_consultation_streams(tmp_path):
    api = Api(_settings(tmp_path, "memory"), "erin")
    response = api.client.post("/api/chat", json={"message": "我想咨询保险"},
                               headers={**api.headers, "Accept": "text/event-stream"})
    body = response.get_data(as_text=True)
    assert response.mimetype == "text/event-stream"
    deltas = [line for line in body.splitlines() if line.startswith("event: delta")]
    assert len(deltas) > 3 and "event: turn" in body and "投保人基本信息" in body
