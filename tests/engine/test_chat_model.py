"""ChatModel against the fake server: the SDK's retries, request counting, fallbacks.

Real HTTP through the real openai client; nothing of the engine is mocked.
"""

from __future__ import annotations

import socket
import threading
import time
from types import SimpleNamespace

import pytest

from si_agent.config.settings import Settings
from si_agent.engine.chat import ChatModel, ModelUnavailable
from si_agent.engine.llm import GroundedAnswerer, LLMEngine
from si_agent.errors import SiAgentError

from .conftest import make

HELLO = [{"role": "user", "content": "你好"}]
MATCH_PHONE_CHANGE = {"tool_calls": [{"name": "match_business",
                                      "arguments": {"business_id": "phone_change"}}]}


def test_completion_text_calls_and_usage(settings, fake):
    chat = ChatModel(settings)
    fake.push({"content": "您好", "tool_calls": [{"name": "f", "arguments": "{\"a\": 1}"}]})
    reply = chat.complete(HELLO, [{"type": "function", "function": {"name": "f"}}])
    assert reply.content == "您好"
    assert [(c.name, c.arguments) for c in reply.tool_calls] == [("f", '{"a": 1}')]
    assert reply.usage.model_calls == 1 and reply.usage.prompt_tokens > 0
    assert fake.requests[-1]["tool_choice"] == "auto"
    fake.push({"content": "好"})
    chat.complete(HELLO)
    assert "tools" not in fake.requests[-1] and "tool_choice" not in fake.requests[-1]


def test_429_with_retry_after_then_success_is_one_decision_of_two_requests(
        catalog, settings, fake):
    ctl = make(catalog, settings, LLMEngine(catalog, settings))
    fake.push({"status": 429, "headers": {"Retry-After": "0"}}, MATCH_PHONE_CHANGE)
    turn = ctl.handle("u", "我手机号换了，社保那边也得改")
    assert turn.business.id == "phone_change" and turn.awaiting == "id_number"
    assert turn.usage["turn"].model_calls == 2
    record = ctl.store.load("u").memory[-1]
    assert record.engine == "llm" and record.reason == "tool calls"
    assert len(fake.requests) == 2 and fake.unscripted == 0


def test_the_server_chosen_delay_is_honoured(settings, fake):
    # Without a header the SDK waits at least 0.375 s; the server asks for 20 ms.
    chat = ChatModel(settings.replace(llm_max_retries=2))
    fake.push({"status": 429, "headers": {"retry-after-ms": "20"}},
              {"status": 503, "headers": {"retry-after-ms": "20"}}, {"content": "好"})
    started = time.monotonic()
    reply = chat.complete(HELLO)
    assert time.monotonic() - started < 0.35
    assert reply.content == "好" and reply.usage.model_calls == 3


def test_two_server_errors_with_one_retry_fall_back_to_rules_session_intact(
        catalog, settings, fake):
    ctl = make(catalog, settings, LLMEngine(catalog, settings.replace(llm_max_retries=1)))
    fake.push({"tool_calls": [
        {"name": "match_business", "arguments": {"business_id": "social_transfer"}},
        {"name": "provide_field", "arguments": {"values": {"from_city": "杭州"}}}]})
    ctl.handle("u", "社保转移，从杭州转出")
    fake.push({"status": 500}, {"status": 500})
    turn = ctl.handle("u", "转到苏州去")
    assert turn.usage["turn"].model_calls == 2 and fake.pending == 0 and fake.unscripted == 0
    session = ctl.store.load("u")
    assert session.state == "collecting" and session.business_id == "social_transfer"
    assert session.fields["from_city"].value == "杭州市"
    assert session.fields["to_city"].value == "苏州市"
    record = session.memory[-1]
    assert record.engine == "llm->rules"
    assert "model unavailable: HTTP 500 after 2 request(s)" in record.reason


def test_a_timeout_falls_back_within_the_configured_time(catalog, settings, fake):
    quick = settings.replace(llm_timeout=0.3, llm_max_retries=0)
    ctl = make(catalog, quick, LLMEngine(catalog, quick))
    fake.push({"delay": 2.0, "content": "太慢了"})
    started = time.monotonic()
    turn = ctl.handle("u", "我要转社保，从杭州转到苏州")
    assert time.monotonic() - started < 1.0
    assert turn.state == "collecting" and turn.awaiting == "id_number"
    assert turn.usage["turn"].model_calls == 1
    record = ctl.store.load("u").memory[-1]
    assert record.engine == "llm->rules" and "APITimeoutError after 1 request(s)" in record.reason
    assert "太慢了" not in turn.reply


def test_timeouts_are_retried_within_timeout_times_attempts_plus_backoff(settings, fake):
    chat = ChatModel(settings.replace(llm_timeout=0.3, llm_max_retries=1))
    fake.push({"delay": 2.0, "content": "慢"}, {"delay": 2.0, "content": "慢"})
    started = time.monotonic()
    with pytest.raises(ModelUnavailable) as caught:
        chat.complete(HELLO)
    # two requests of 0.3 s and one backoff of at most 0.5 s
    assert time.monotonic() - started < 2 * 0.3 + 0.5 + 0.4
    assert caught.value.usage.model_calls == 2
    assert isinstance(caught.value, SiAgentError)


def test_connection_errors_count_every_attempt(settings):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens there
    chat = ChatModel(settings.replace(llm_base_url=f"http://127.0.0.1:{port}/v1",
                             llm_max_retries=1))
    with pytest.raises(ModelUnavailable, match="APIConnectionError after 2 request"):
        chat.complete(HELLO)


def test_a_refused_request_is_not_retried(settings, fake):
    chat = ChatModel(settings.replace(llm_max_retries=2))
    fake.push({"status": 400, "message": "bad request"}, {"content": "不该用到"})
    with pytest.raises(ModelUnavailable, match="HTTP 400 after 1 request") as caught:
        chat.complete(HELLO)
    assert caught.value.usage.model_calls == 1 and fake.pending == 1


def test_parallel_calls_on_one_client_count_apart(settings, fake):
    chat = ChatModel(settings)
    fake.push({"status": 429, "headers": {"retry-after-ms": "10"}}, {"content": "a"},
              {"content": "b"})
    counts: list[int] = []
    threads = [threading.Thread(target=lambda: counts.append(chat.complete(HELLO).usage.model_calls))
               for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(counts) == [1, 2]


def test_max_retries_setting_from_the_environment():
    assert Settings().llm_max_retries == 2
    assert Settings.from_env({"SI_LLM_MAX_RETRIES": "0"}).llm_max_retries == 0
    assert Settings.from_env({"SI_LLM_MAX_RETRIES": "5"}).llm_max_retries == 5
    for bad in ("-1", "two"):
        with pytest.raises(ValueError, match="SI_LLM_MAX_RETRIES"):
            Settings.from_env({"SI_LLM_MAX_RETRIES": bad})


# -- the grounded answerer shares the chat model ----------------------------------------

PASSAGES = [SimpleNamespace(number=1, title="社保转移办法", heading="材料",
                            text="本人身份证或社保卡。")]


def test_grounded_answerer_uses_chat_model_and_redacts(settings, fake):
    chat = ChatModel(settings)
    answerer = GroundedAnswerer(settings, chat=chat)
    assert answerer.chat is chat
    assert isinstance(GroundedAnswerer(settings).chat, ChatModel)
    fake.push({"content": "凭身份证<ID_1>办理 [1]。"})
    answer = answerer("我身份证330122196303150178，转社保要什么材料", PASSAGES)
    assert answer == "凭身份证3301**********0178办理 [1]。"
    system, user = fake.requests[-1]["messages"]
    assert "[1] 《社保转移办法》材料" in system["content"]
    assert user["content"] == "我身份证<ID_1>，转社保要什么材料"
    assert "330122196303150178" not in str(fake.requests)
    assert "tools" not in fake.requests[-1]


def test_grounded_answerer_raises_model_unavailable_after_the_retries(settings, fake):
    answerer = GroundedAnswerer(settings.replace(llm_max_retries=1))
    fake.push({"status": 502}, {"status": 502})
    with pytest.raises(ModelUnavailable, match="HTTP 502 after 2 request"):
        answerer("社保转移要什么材料", PASSAGES)
    assert fake.pending == 0 and fake.unscripted == 0
