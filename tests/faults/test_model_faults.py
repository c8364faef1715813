"""Model endpoint faults: the real openai client against a fake OpenAI-compatible
server (real HTTP) that errs in the middle of a dialogue.

The fault hits the turn where the citizen gives the phone number. Whatever the
endpoint does (HTTP 500, an HTML 502 page, a reply slower than ``llm_timeout``,
broken JSON, a body without choices, an empty answer, a broken stream), the
rule engine decides that turn within the configured bound, the number is
recorded, and once the model is back the dialogue ends in exactly one
application holding every collected value. A model that calls tools that do not
exist or with arguments that do not fit is not a fault of the endpoint: its
calls are dropped, the turn asks again, and nothing collected is lost.

The wall-time assertion is a correctness bound (the fallback does not wait
forever), not a speed target: the SDK sends ``llm_max_retries + 1`` requests of
at most ``llm_timeout`` each, with its short backoff between them.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from si_agent.config.loader import load_businesses
from si_agent.config.settings import Settings
from si_agent.engine.llm import LLMEngine
from si_agent.executor import Executors
from si_agent.flow.controller import Controller
from si_agent.session import MemoryStore
from si_agent.testing import FakeOpenAI
from si_agent.testing.processes import served_api
from tests.faults._engine_helpers import CARD_LOSS, applications

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT, RETRIES = 1.0, 1
BOUND = (RETRIES + 1) * TIMEOUT + 5.0  # requests x timeout, the SDK's backoff, a loaded CI box

HTML = "<html><body><h1>502 Bad Gateway</h1><hr>nginx</body></html>"
FAULTS = {
    # name: (scripted answers for the faulty turn, requests the client sends, streamed)
    "http_500": ([{"status": 500}] * (RETRIES + 1), RETRIES + 1, False),
    "html_502_page": ([{"status": 502, "body": HTML, "content_type": "text/html"}] * (RETRIES + 1),
                      RETRIES + 1, False),
    "slower_than_timeout": ([{"delay": TIMEOUT + 2.0, "content": "太慢了"}] * (RETRIES + 1),
                            RETRIES + 1, False),
    "broken_json": ([{"body": '{"choices": [{"message": {"content": '}], 1, False),
    "html_page_with_200": ([{"body": HTML, "content_type": "text/html"}], 1, False),
    "json_without_choices": ([{"body": '{"choices": []}'}], 1, False),
    "choice_without_message": ([{"body": '{"choices": [{"index": 0}]}'}], 1, False),
    "empty_answer": ([{}], 1, False),
    "stream_http_500": ([{"status": 500}] * (RETRIES + 1), RETRIES + 1, True),
    "stream_broken_event": ([{"body": "data: {not json\n\n"}], 1, True),
    "stream_html_page": ([{"body": HTML, "content_type": "text/html"}], 1, True),
}


@pytest.fixture
def settings(fake, tmp_path) -> Settings:
    return Settings(business_dir=ROOT / "businesses", knowledge="none", data_dir=tmp_path,
                    session_store="memory", llm_base_url=fake.base_url, llm_api_key="test-key",
                    llm_timeout=TIMEOUT, llm_max_retries=RETRIES)


@pytest.fixture(scope="module")
def catalog():
    return load_businesses(ROOT / "businesses")


@pytest.fixture
def ctl(catalog, settings):
    with Executors(settings) as executors:  # card_loss goes to the in-process demo backend
        yield Controller(catalog, MemoryStore(), LLMEngine(catalog, settings), executors)


def collected(ctl: Controller, user: str) -> dict[str, str]:
    session = ctl.store.load(user)
    return {k: st.value for k, st in session.fields.items() if st.status == "collected"}


def call(name: str, **arguments) -> dict:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


def begin(ctl: Controller, fake: FakeOpenAI, user: str) -> None:
    """Start card loss and give ID number and name, the model healthy."""
    fake.push(call("match_business", business_id="card_loss"))
    assert ctl.handle(user, "我的社保卡丢了").awaiting == "id_number"
    fake.push(call("provide_field", values={"id_number": "<ID_1>", "name": "张伟"}))
    turn = ctl.handle(user, "330122196303150178，张伟")
    assert turn.awaiting == "phone", turn.reply


def finish(ctl: Controller, fake: FakeOpenAI, user: str, settings: Settings) -> None:
    """The model is back: choose the loss type, confirm; one application, every value."""
    fake.push(call("provide_field", values={"loss_type": "临时挂失"}))
    assert ctl.handle(user, "临时").state == "confirming"
    fake.push(call("confirm_submit"))
    done = ctl.handle(user, "确认")
    assert done.state == "done", done.reply
    [application] = applications(settings.demo_backend_db, "card_loss")
    assert application["payload"] == CARD_LOSS  # zero lost fields, zero duplicates
    assert done.result["application_no"] == application["application_no"]


@pytest.mark.parametrize("fault", FAULTS)
def test_the_rules_answer_when_the_model_fails(ctl, fake, settings, fault):
    answers, requests, streamed = FAULTS[fault]
    user = f"model-{fault}"
    begin(ctl, fake, user)
    fake.push(*answers)
    sent = len(fake.requests)
    pieces: list[str] = []
    started = time.monotonic()
    turn = ctl.handle(user, "13800138001", pieces.append if streamed else None)
    elapsed = time.monotonic() - started

    assert elapsed < BOUND, f"the fallback took {elapsed:.1f} s"
    assert turn.state == "collecting" and turn.awaiting == "loss_type", turn.reply
    assert "138****8001" in turn.reply and "请选择挂失方式" in turn.reply
    assert collected(ctl, user) == {k: v for k, v in CARD_LOSS.items() if k != "loss_type"}
    record = ctl.store.load(user).memory[-1]
    assert record.engine == "llm->rules"
    assert len(fake.requests) - sent == requests and fake.pending == 0  # no extra retries
    assert all(r.get("stream") is (True if streamed else None) for r in fake.requests[sent:])
    finish(ctl, fake, user, settings)
    assert fake.unscripted == 0


@pytest.mark.parametrize("answer", [
    call("delete_everything"),  # a tool that does not exist
    {"tool_calls": [{"name": "delete_everything", "arguments": {}},
                    {"name": "submit_form", "arguments": {"phone": "<PHONE_1>"}}]},
], ids=["unknown_tool", "two_made_up_tools"])
def test_made_up_tool_names_leave_the_turn_to_the_rules(ctl, fake, settings, answer):
    """A tool that exists in no state: the model's answer is as good as none."""
    user = "model-wrong-tools"
    begin(ctl, fake, user)
    fake.push(answer)
    turn = ctl.handle(user, "13800138001")
    assert turn.state == "collecting" and turn.awaiting == "loss_type", turn.reply
    record = ctl.store.load(user).memory[-1]
    assert record.engine == "llm->rules"
    assert "not offered" in record.reason and "only made-up tool names" in record.reason
    assert collected(ctl, user) == {k: v for k, v in CARD_LOSS.items() if k != "loss_type"}
    finish(ctl, fake, user, settings)


@pytest.mark.parametrize("answer", [
    call("confirm_submit"),  # a tool of another state (confirming), not offered while collecting
    call("provide_field", values={"phone": ["138"]}),  # arguments that do not fit the schema
    {"tool_calls": [{"name": "provide_field", "arguments": "{\"values\": {\"phone\": "}]},
], ids=["tool_not_offered", "wrong_argument_type", "truncated_arguments"])
def test_calls_that_do_not_fit_are_dropped_and_the_turn_asks_again(ctl, fake, settings, answer):
    user = "model-dropped"
    begin(ctl, fake, user)
    fake.push(answer)
    turn = ctl.handle(user, "13800138001")
    assert turn.state == "collecting" and turn.awaiting == "phone"
    assert "手机号码" in turn.reply  # asked again
    record = ctl.store.load(user).memory[-1]
    assert record.calls == [] and record.reason.startswith("dropped ")
    assert collected(ctl, user) == {"id_number": CARD_LOSS["id_number"], "name": "张伟"}
    # The model is back; the citizen says it again.
    fake.push(call("provide_field", values={"phone": "<PHONE_1>"}))
    assert ctl.handle(user, "13800138001").awaiting == "loss_type"
    finish(ctl, fake, user, settings)


def test_a_model_that_stays_down_never_blocks_the_dialogue(ctl, fake, settings):
    """Every request fails from the first turn to the submission: the rules carry the
    whole dialogue, one fallback per turn."""
    user = "model-down"
    turns = ["我的社保卡丢了", "330122196303150178", "张伟", "13800138001", "临时", "确认"]
    for text in turns:
        fake.push(*[{"status": 503}] * (RETRIES + 1))
        turn = ctl.handle(user, text)
        assert ctl.store.load(user).memory[-1].engine == "llm->rules", text
    assert turn.state == "done", turn.reply
    assert fake.pending == 0 and fake.unscripted == 0
    assert len(fake.requests) == len(turns) * (RETRIES + 1)
    [application] = applications(settings.demo_backend_db, "card_loss")
    assert application["payload"] == CARD_LOSS


# -- the same through the API process -------------------------------------------------------

# Longer than what the moderation holds back of a stream (the list's longest word less
# one character), so that some of it reaches the page before the stream breaks.
FIRST_WORDS = "好的，我来帮您看看社保卡挂失要准备哪些材料"
CHUNK = ('data: {"id": "c1", "object": "chat.completion.chunk", "created": 0, "model": "fake", '
         '"choices": [{"index": 0, "delta": {"content": "' + FIRST_WORDS + '"}, '
         '"finish_reason": null}]}\n\n')


def sse_events(response) -> list[tuple[str, dict]]:
    events, name = [], None
    for line in response.iter_lines():
        if line.startswith("event: "):
            name = line[len("event: "):]
        elif line.startswith("data: "):
            events.append((name, json.loads(line[len("data: "):])))
    return events


def test_the_api_answers_every_turn_while_the_model_is_broken(fake, tmp_path):
    """``si-agent serve`` with the model engine: broken JSON, a 500 and a stream that
    breaks after its first words, turn after turn; never an HTTP error or an error
    event, the dialogue ends in one application. A stream that broke after some
    text is reset before the rules' reply."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SI_")}
    env.update(SI_BUSINESS_DIR=str(ROOT / "businesses"), SI_DATA_DIR=str(tmp_path),
               SI_KNOWLEDGE="none", SI_SESSION_STORE="sqlite", SI_ENGINE="llm",
               SI_LLM_BASE_URL=fake.base_url, SI_LLM_API_KEY="test-key",
               SI_LLM_TIMEOUT=str(TIMEOUT), SI_LLM_MAX_RETRIES=str(RETRIES),
               SI_RATE_LIMIT="1000 per minute", SI_JWT_SECRET="a secret of the model fault tests")
    with served_api(env, user="model-api", log=tmp_path / "api.log") as client:
        streamed = {"Accept": "text/event-stream"}
        plan = [  # (message, scripted answers, streamed)
            ("我的社保卡丢了", [{"body": "{not json"}], False),
            (CARD_LOSS["id_number"], [{"body": CHUNK + "data: {not json\n\n"}], True),
            (CARD_LOSS["name"], [{"status": 500}] * (RETRIES + 1), False),
            (CARD_LOSS["phone"], [{"body": "<html>502</html>", "content_type": "text/html"}],
             True),
            ("临时", [{"body": '{"choices": []}'}], False),
            ("确认", [{"body": "data: {not json\n\n"}], True),
        ]
        for message, answers, stream in plan:
            fake.push(*answers)
            if stream:
                with client.stream("POST", "/api/chat", json={"message": message},
                                   headers=streamed) as response:
                    assert response.status_code == 200
                    events = sse_events(response)
                names = [name for name, _ in events]
                assert "error" not in names and names[-1] == "turn", names
                turn = events[-1][1]
                if answers[0]["body"].startswith(CHUNK):  # text came, then the stream broke
                    first = events[0]
                    assert first[0] == "delta" and first[1]["text"].startswith("好的，我来")
                    assert FIRST_WORDS.startswith(first[1]["text"]) and "reset" in names
                    assert not turn["reply"].startswith("好的，我来")
            else:
                response = client.post("/api/chat", json={"message": message})
                assert response.status_code == 200, response.text
                turn = response.json()
        assert turn["state"] == "done", turn["reply"]
        assert fake.pending == 0
        [application] = applications(tmp_path / "demo_backend.db", "card_loss")
        assert application["payload"] == CARD_LOSS
