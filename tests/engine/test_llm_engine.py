"""The model engine against the fake OpenAI-compatible server (real openai client)."""

from __future__ import annotations

import json

import pytest

from si_agent.engine.llm import HybridEngine, LLMEngine
from si_agent.engine.registry import create_engine
from si_agent.engine.rules import RuleEngine
from si_agent.errors import SettingsError, UnknownBackendError
from si_agent.server import create_app

from .conftest import make


def test_engine_registry(catalog, settings):
    assert isinstance(create_engine("auto", catalog, settings), HybridEngine)
    assert isinstance(create_engine("auto", catalog, settings.replace(llm_base_url=None)),
                      RuleEngine)
    assert isinstance(create_engine("llm", catalog, settings), LLMEngine)
    with pytest.raises(SettingsError, match="SI_LLM_BASE_URL"):
        create_engine("llm", catalog, settings.replace(llm_base_url=None))
    with pytest.raises(UnknownBackendError, match="auto, hybrid, llm, rules"):
        create_engine("gpt", catalog, settings)


def test_request_shape_history_and_redaction(catalog, settings, fake):
    ctl = make(catalog, settings, LLMEngine(catalog, settings))
    fake.push({"tool_calls": [{"name": "match_business",
                               "arguments": {"business_id": "phone_change"}}]})
    ctl.handle("u", "我想换个手机号")
    fake.push({"tool_calls": [{"name": "provide_field", "arguments": {
        "values": {"id_number": "<ID_1>", "name": "王芳", "new_phone": "<PHONE_1>"}}}]})
    turn = ctl.handle("u", "王芳，320583199008230462，新号13912345678")
    assert turn.state == "confirming"
    body = fake.requests[-1]
    assert [t["function"]["name"] for t in body["tools"]] == [
        "provide_field", "modify_info", "explain_field", "switch_business", "cancel_flow",
        "answer_question", "small_talk"]
    assert body["tool_choice"] == "auto" and body["temperature"] == 0.3
    assert body["messages"][-1] == {"role": "user", "content": "王芳，<ID_1>，新号<PHONE_1>"}
    assert [m["role"] for m in body["messages"]] == ["system", "user", "assistant", "user"]
    assert "联系电话变更" in body["messages"][0]["content"]
    sent = json.dumps(fake.requests, ensure_ascii=False)
    assert "320583199008230462" not in sent and "13912345678" not in sent
    session = ctl.store.load("u")
    assert session.fields["id_number"].value == "320583199008230462"
    assert session.usage.model_calls == 2 and session.usage.prompt_tokens > 0
    assert turn.usage["turn"].model_calls == 1


def test_timeouts_retried_by_the_sdk_then_rules_decide(catalog, settings, fake):
    ctl = make(catalog, settings, LLMEngine(catalog, settings))
    fake.push({"delay": 1.5, "content": "太慢了"}, {"delay": 1.5, "content": "太慢了"})
    turn = ctl.handle("u", "我要转社保，从杭州转到苏州")
    assert turn.state == "collecting" and turn.awaiting == "id_number"
    assert turn.usage["turn"].model_calls == 2
    record = ctl.store.load("u").memory[-1]
    assert record.engine == "llm->rules" and "model unavailable" in record.reason


def test_server_error_then_success(catalog, settings, fake):
    ctl = make(catalog, settings, LLMEngine(catalog, settings))
    fake.push({"status": 500}, {"tool_calls": [
        {"name": "match_business", "arguments": {"business_id": "pension_query"}}]})
    turn = ctl.handle("u", "帮我看看老头子的退休工资到了没")
    assert turn.business.id == "pension_query"
    assert turn.usage["turn"].model_calls == 2


def test_per_field_extraction_runs_one_call_per_field(catalog, settings, fake):
    per_field = catalog["social_transfer"].model_copy(update={"extraction": "per_field"})
    catalog = {**catalog, "social_transfer": per_field}
    ctl = make(catalog, settings, LLMEngine(catalog, settings))
    fake.push({"tool_calls": [{"name": "match_business",
                               "arguments": {"business_id": "social_transfer"}}]})
    ctl.handle("u", "办个社保转移")
    # Four pending fields, four parallel calls; answers arrive in any order, so
    # the scripted calls name no tool and the fake answers with the one offered.
    fake.push(*[{"tool_calls": [{"arguments": {"value": None}}]}] * 4)
    fake.push({"content": None})  # nothing extracted: the whole turn goes to the model
    before = len(fake.requests)
    turn = ctl.handle("u", "没想好")
    calls = fake.requests[before:before + 4]
    assert sorted(b["tools"][0]["function"]["name"] for b in calls) == sorted(
        f"extract_{k}" for k in ("from_city", "to_city", "id_number", "name"))
    assert all(len(b["tools"]) == 1 for b in calls)
    assert turn.state == "collecting"
    assert turn.usage["turn"].model_calls == 5  # four extractions, then the whole turn
    assert fake.unscripted == 0

def test_model_text_streams_to_the_caller(catalog, settings, fake):
    ctl = make(catalog, settings, LLMEngine(catalog, settings))
    fake.push({"content": "灵活就业人员可以按月或按年缴纳养老保险。"})
    pieces: list[str] = []
    turn = ctl.handle("u", "灵活就业怎么交养老保险比较划算", on_delta=pieces.append)
    assert len(pieces) > 3
    assert turn.reply.startswith("".join(pieces))
    assert fake.requests[-1]["stream"] is True


def test_sse_streams_model_tokens_and_debug_view(settings, fake):
    app = create_app(settings.replace(engine="llm"))
    client = app.test_client()
    token = client.post("/api/token", json={"user_id": "eve"}).get_json()["access_token"]
    headers = {"Authorization": f"Bearer {token}", "Accept": "text/event-stream"}
    fake.push({"content": "失业保险金一般按月发放，最长24个月。"})
    res = client.post("/api/chat", json={"message": "失业金最多能领多久啊"}, headers=headers)
    blocks = res.get_data(as_text=True).strip().split("\n\n")
    deltas = [json.loads(b.split("\n")[1][6:])["text"] for b in blocks if b.startswith("event: delta")]
    turn = json.loads(blocks[-1].split("\n")[1][6:])
    assert "".join(deltas) == turn["reply"]
    assert turn["reply"].startswith("失业保险金一般按月发放")
    debug = client.get("/api/session?debug=1", headers={"Authorization": f"Bearer {token}"})
    memory = debug.get_json()["memory"]
    assert memory[-1]["engine"] == "llm" and memory[-1]["usage"]["model_calls"] == 1
    prod = create_app(settings.replace(auth_mode="prod", jwt_secret="x" * 40)).test_client()
    import time

    import jwt as pyjwt
    now = int(time.time())
    tok = pyjwt.encode({"sub": "eve", "type": "access", "jti": "j", "fresh": False, "iat": now,
                        "nbf": now, "exp": now + 60}, "x" * 40, algorithm="HS256")
    res = prod.get("/api/session?debug=1", headers={"Authorization": f"Bearer {tok}"})
    assert res.status_code == 403


def test_arguments_of_the_wrong_type_are_dropped_not_crashing(catalog, settings, fake):
    ctl = make(catalog, settings, LLMEngine(catalog, settings))
    fake.push({"tool_calls": [{"name": "match_business", "arguments": {"business_id": ["x"]}},
                              {"name": "answer_question",
                               "arguments": {"question": "?", "suggested_business_id": {"a": 1}}}]})
    turn = ctl.handle("u", "随便问问")
    assert turn.state == "idle"
    record = ctl.store.load("u").memory[-1]
    assert "dropped match_business: business_id: not one of the allowed values" in record.reason
    assert [c.name for c in record.calls] == ["answer_question"]


def test_split_placeholders_stream_masked(catalog, settings, fake):
    ctl = make(catalog, settings, LLMEngine(catalog, settings))
    fake.push({"content": "好的，您的身份证<ID_1>已收到。"})  # 4-character deltas split it
    pieces: list[str] = []
    turn = ctl.handle("u", "我身份证330122196303150178，想问问社保的事", on_delta=pieces.append)
    streamed = "".join(pieces)
    assert "<ID" not in streamed and "330122196303150178" not in streamed
    assert streamed == "好的，您的身份证3301**********0178已收到。"
    assert turn.reply.startswith(streamed)
