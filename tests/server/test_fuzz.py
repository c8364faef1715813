"""Fuzz the HTTP API: schemathesis from ``/openapi.json``, then the dialogue itself.

1. ``test_every_operation_keeps_its_contract``: schemathesis reads the document the
   app serves and sends positive and negative requests to every operation (bounded:
   50 examples per operation, no deadline), authenticated with a dev token. Every
   stateless check runs on every response: no 5xx, status codes, content types and
   bodies as documented, invalid input rejected, valid input accepted, auth enforced,
   undocumented methods refused. Schemathesis leaves out ``GET /openapi.json`` itself.
2. ``test_random_messages_in_any_dialogue_state``: hypothesis drives business
   dialogues part way (so turns land in collecting, confirming, done, ...) and then
   sends random messages; no message may cause a 5xx.
3. Regressions for the 5xx that fuzzing (and probing around it) found: OPTIONS
   preflights, lone surrogates, deeply nested JSON, the limiter's storage down.
"""

from __future__ import annotations

import json
from collections import Counter

import pytest
import schemathesis
from flask_jwt_extended import create_access_token
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from si_agent.server import create_app
from si_agent.server.chat import INVISIBLE

MAX_EXAMPLES = 50
# Schemathesis also probes each operation with methods the document does not list.
PROBED_METHODS = ["GET", "PUT", "POST", "DELETE", "PATCH", "TRACE", "OPTIONS"]
# A message over SI_MAX_MESSAGE_CHARS is refused with the documented 413.
REJECTION_STATUSES = [400, 401, 404, 405, 413, 415, 422]


@pytest.fixture
def fuzz_app(settings):
    return create_app(settings.replace(engine="rules", rate_limit="100000 per minute"))


@pytest.fixture
def api_schema(fuzz_app):
    with fuzz_app.app_context():  # an admin, so GET /api/admin/audit is fuzzed past its 403
        token = create_access_token(identity="fuzzer", additional_claims={"roles": ["admin"]})
    config = schemathesis.Config.from_dict({
        "auth": {"openapi": {"bearer": {"bearer": token}}},
        "checks": {"negative_data_rejection": {"expected-statuses": REJECTION_STATUSES}},
        "phases": {"coverage": {"unexpected-methods": PROBED_METHODS}},
        # A schema-valid upload is still refused when no step awaits a photo (400) or
        # the bytes are no JPEG/PNG/WebP image (415): the schema cannot say either.
        "operations": [{"include-path": "/api/upload", "checks": {
            "positive_data_acceptance": {"expected-statuses": [200, 400, 413, 415]}}},
                       # The same for a clip: bytes that are no audio (415), broken or
                       # silent audio (400).
                       {"include-path": "/api/voice", "checks": {
                           "positive_data_acceptance": {"expected-statuses": [200, 400, 413,
                                                                              415]}}},
                       # A schema-valid rating of a turn the caller never had is a 400.
                       {"include-path": "/api/feedback", "checks": {
                           "positive_data_acceptance": {"expected-statuses": [200, 400]}}},
                       # ``since`` is free text: one that is neither ISO nor an age is a 400.
                       {"include-path": "/api/admin/audit", "checks": {
                           "positive_data_acceptance": {"expected-statuses": [200, 400]}}}],
    })
    return schemathesis.openapi.from_wsgi("/openapi.json", fuzz_app, config=config)


@pytest.fixture
def sent(api_schema):
    """Requests sent per operation; after the run, every operation must have had some."""
    counts: Counter[str] = Counter()
    yield counts
    operations = {result.ok().label for result in api_schema.get_all_operations()}
    assert operations >= {
        "POST /api/token", "POST /api/chat", "GET /api/session", "DELETE /api/session",
        "GET /api/businesses", "GET /healthz", "GET /readyz", "GET /api/admin/audit",
        "POST /api/logout", "POST /api/token/refresh",
    }
    assert set(counts) == operations, f"operations never called: {operations - set(counts)}"
    assert counts["POST /api/chat"] >= MAX_EXAMPLES and counts["POST /api/token"] >= MAX_EXAMPLES
    assert sum(counts.values()) >= 200, counts


schema = schemathesis.pytest.from_fixture("api_schema")
# These revoke the token they are called with: each call gets a fresh one.
REVOKING = {"POST /api/logout", "DELETE /api/session"}


@schema.parametrize()
@settings(max_examples=MAX_EXAMPLES, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much,
                                 HealthCheck.function_scoped_fixture])
def test_every_operation_keeps_its_contract(case, sent, fuzz_app):
    if case.operation.label in REVOKING and "Authorization" in (case.headers or {}):
        with fuzz_app.app_context():
            fresh = create_access_token(identity="fuzzer", additional_claims={"roles": ["admin"]})
        case.headers["Authorization"] = f"Bearer {fresh}"
    case.call_and_validate()  # all enabled stateless checks
    sent[case.operation.label] += 1


# -- Dialogue fuzzing -----------------------------------------------------------

HAPPY_PATHS = {
    "social_transfer": ["我要转社保", "从杭州转到苏州", "330122196303150178", "张伟", "确认"],
    "pension_query": ["查养老金", "330122196303150178"],
    "insurance_record": ["查缴费记录", "320583199008230462", "2019年到2021年"],
    "card_loss": ["社保卡挂失", "330102199503080133", "刘洋", "确认"],
}
WORDS = ["确认", "取消", "修改", "不对", "是的", "算了", "重新开始", "人工", "你好", "杭州", "苏州",
         "北京", "330122196303150178", "33010619900101123X", "张伟", "刘小洋", "13800138003",
         "6222021202004568821", "2019年", "60%", "SI20260915000001", "明天", "2025-06-30", "九十九"]
_token = st.one_of(st.sampled_from(WORDS), st.text(max_size=12),
                   st.text(alphabet="0123456789Xx年月日-/.%，,到至 ", max_size=20))
# A message with something to read once invisible characters are dropped (a message of
# only control characters is empty: 400, tested in test_api).
_message = st.lists(_token, min_size=1, max_size=3).map("".join).filter(
    lambda m: INVISIBLE.sub("", m).strip())


@settings(max_examples=150, deadline=None, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(business=st.sampled_from(sorted(HAPPY_PATHS)), cut=st.integers(0, 5),
       messages=st.lists(_message, min_size=1, max_size=4), stream=st.booleans())
def test_random_messages_in_any_dialogue_state(fuzz_app, business, cut, messages, stream):
    client = fuzz_app.test_client()
    token = client.post("/api/token", json={"user_id": "dialogue-fuzzer"}).get_json()
    headers = {"Authorization": f"Bearer {token['access_token']}"}
    if stream:
        headers["Accept"] = "text/event-stream"
    client.delete("/api/session", headers=headers)  # revokes the token: get a new one
    token = client.post("/api/token", json={"user_id": "dialogue-fuzzer"}).get_json()
    headers["Authorization"] = f"Bearer {token['access_token']}"
    for message in HAPPY_PATHS[business][:cut] + messages:
        res = client.post("/api/chat", json={"message": message}, headers=headers)
        assert res.status_code == 200, (message, res.status_code, res.get_data(as_text=True))
        turn = _last_sse_data(res.get_data(as_text=True)) if stream else res.get_json()
        assert turn["reply"] and turn["state"] in {
            "idle", "collecting", "step_executing", "confirming", "executing", "done", "failed"}


def _last_sse_data(body: str) -> dict:
    last_event = body.strip().split("\n\n")[-1]
    assert last_event.startswith("event: turn\n"), last_event
    return json.loads(last_event.split("\n", 1)[1].removeprefix("data: "))


# -- 5xx found by fuzzing, fixed: regressions -----------------------------------------


def _login(app) -> dict[str, str]:
    token = app.test_client().post("/api/token", json={"user_id": "alice"}).get_json()
    return {"Authorization": f"Bearer {token['access_token']}"}


@pytest.mark.parametrize("path", ["/api/chat", "/api/session"])
def test_options_preflight_is_not_a_server_error(fuzz_app, path):
    assert fuzz_app.test_client().options(path).status_code < 500


@pytest.mark.parametrize("message", ["\\ud800", "从杭州\\udc00转到苏州", "张\\ud83d"])
def test_lone_surrogate_is_a_client_error(fuzz_app, message):
    res = fuzz_app.test_client().post(
        "/api/chat", data=f'{{"message": "{message}"}}',
        headers={**_login(fuzz_app), "Content-Type": "application/json"})
    assert res.status_code == 400


@pytest.mark.parametrize("path", ["/api/chat", "/api/token"])
def test_deeply_nested_json_is_a_client_error(fuzz_app, path):
    body = '{"message": "hi", "user_id": "a", "x": ' + "[" * 20000 + "]" * 20000 + "}"
    res = fuzz_app.test_client().post(
        path, data=body, headers={**_login(fuzz_app), "Content-Type": "application/json"})
    assert res.status_code == 400


def test_rate_limit_storage_down_is_not_a_500(settings):
    app = create_app(settings.replace(engine="rules",
                                      rate_limit_storage="redis://127.0.0.1:9/0"))
    res = app.test_client().post("/api/chat", json={"message": "你好"}, headers=_login(app))
    assert res.status_code != 500
