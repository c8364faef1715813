"""How HttpExecutor builds requests and maps responses, against httpx.MockTransport."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import date

import httpx
import pytest

from si_agent.config.settings import Settings
from si_agent.errors import ConfigErrors, ExecutorError
from si_agent.executor import Executors, texts

URL = "${SI_TEST_BACKEND:-http://backend.test}/api/thing"


def executors_with(settings: Settings, answer: Callable[[httpx.Request], httpx.Response],
                   seen: list[httpx.Request] | None = None) -> Executors:
    def handler(request: httpx.Request) -> httpx.Response:
        if seen is not None:
            seen.append(request)
        return answer(request)

    return Executors(settings, transport=httpx.MockTransport(handler))


@pytest.fixture
def thing(make_business):
    """``thing(**api)``: a business with fields id_number, name, start_date on URL."""
    return lambda **kwargs: make_business(
        "thing", ["id_number", "name", "start_date"], url=URL, **kwargs)


@pytest.fixture
def run_error(settings: Settings, thing):
    """``run_error(response)``: the ExecutorError raised when the backend answers ``response``."""

    def run(response: httpx.Response) -> ExecutorError:
        with executors_with(settings, lambda r: response) as ex:
            with pytest.raises(ExecutorError) as err:
                ex.run(thing(), {"id_number": "1"}, idempotency_key="k")
        return err.value

    return run


def test_post_sends_json_values_and_the_key(settings: Settings, thing):
    seen: list[httpx.Request] = []
    with executors_with(settings, lambda r: httpx.Response(200, json={"ok": "是"}), seen) as ex:
        result = ex.run(thing(), {"name": "张伟", "start_date": date(2026, 1, 2), "n": None},
                        idempotency_key="abc-123")
    assert result == {"ok": "是"}
    (request,) = seen
    assert request.method == "POST"
    assert str(request.url) == "http://backend.test/api/thing"
    assert request.headers["Idempotency-Key"] == "abc-123"
    assert request.headers["Content-Type"].startswith("application/json")
    assert json.loads(request.content) == {"name": "张伟", "start_date": "2026-01-02", "n": None}


def test_get_sends_query_parameters(settings: Settings, thing):
    seen: list[httpx.Request] = []
    with executors_with(settings, lambda r: httpx.Response(200, json={}), seen) as ex:
        ex.run(thing(method="GET"),
               {"name": "张伟", "year": 2019, "flag": True, "skip": None, "d": {"a": 1}},
               idempotency_key="k")
    (request,) = seen
    assert request.method == "GET"
    assert dict(request.url.params) == {"name": "张伟", "year": "2019", "flag": "true",
                                        "d": '{"a": 1}'}
    assert request.headers["Idempotency-Key"] == "k"


@pytest.mark.parametrize("key", ["键", ""])
def test_a_non_ascii_or_empty_key_is_a_programming_error(settings: Settings, thing, key: str):
    seen: list[httpx.Request] = []
    with executors_with(settings, lambda r: httpx.Response(200, json={}), seen) as ex:
        with pytest.raises(ValueError):
            ex.run(thing(), {}, idempotency_key=key)
    assert seen == []


def test_url_is_expanded_at_call_time(settings: Settings, monkeypatch: pytest.MonkeyPatch, thing):
    seen: list[httpx.Request] = []
    with executors_with(settings, lambda r: httpx.Response(200, json={}), seen) as ex:
        ex.run(thing(), {}, idempotency_key="k")
        monkeypatch.setenv("SI_TEST_BACKEND", "http://other.test:8080/prefix")
        ex.run(thing(), {}, idempotency_key="k")
    assert [str(r.url) for r in seen] == [
        "http://backend.test/api/thing", "http://other.test:8080/prefix/api/thing"]


def test_timeout_comes_from_the_business(settings: Settings, thing):
    seen: list[httpx.Request] = []
    with executors_with(settings, lambda r: httpx.Response(200, json={}), seen) as ex:
        ex.run(thing(timeout=2.5), {}, idempotency_key="k")
    assert seen[0].extensions["timeout"] == {"connect": 2.5, "read": 2.5, "write": 2.5,
                                             "pool": 2.5}


def test_4xx_error_body_becomes_field_errors(run_error):
    body = {"error": {"message": "信息有误。", "fields": {"name": "姓名不对。", "other": "x"}}}
    err = run_error(httpx.Response(422, json=body))
    assert (err.message, err.status, err.retryable) == ("信息有误。", 422, False)
    assert err.field_errors == {"name": "姓名不对。"}  # "other" is not a field of the business


def test_4xx_without_a_body_is_a_generic_refusal(run_error):
    err = run_error(httpx.Response(404, text="not found"))
    assert (err.message, err.status, err.retryable, err.field_errors) == (
        texts.REJECTED, 404, False, {})


@pytest.mark.parametrize("status", [408, 429])
def test_throttling_4xx_is_retryable(status: int, run_error):
    assert run_error(httpx.Response(status, json={})).retryable is True


def test_5xx_is_retryable_and_keeps_the_backend_message(run_error):
    err = run_error(httpx.Response(503, json={"error": {"message": "系统维护中。"}}))
    assert (err.message, err.status, err.retryable) == ("系统维护中。", 503, True)
    err = run_error(httpx.Response(500, text="<html>boom</html>"))
    assert (err.message, err.status, err.retryable) == (texts.BUSY, 500, True)


@pytest.mark.parametrize(
    "response",
    [httpx.Response(200, text="OK"), httpx.Response(200, json=["a"]),
     httpx.Response(200, content=b"\xff\xfe")],
)
def test_2xx_that_is_not_a_json_object_is_retryable(response, run_error):
    err = run_error(response)
    assert (err.message, err.retryable) == (texts.BAD_RESPONSE, True)


def test_redirects_are_not_followed(run_error):
    err = run_error(httpx.Response(302, headers={"Location": "http://x.test/"}))
    assert (err.status, err.retryable) == (302, False)


@pytest.mark.parametrize("url", ["${SI_UNSET_BACKEND_FOR_TEST}/api/thing", "${SI_TEST_FTP}/a"])
def test_a_bad_url_is_a_configuration_error_not_retried(
    settings: Settings, url: str, make_business, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("SI_TEST_FTP", "ftp://x.test")
    seen: list[httpx.Request] = []
    with executors_with(settings, lambda r: httpx.Response(200, json={}), seen) as ex:
        with pytest.raises(ExecutorError) as err:
            ex.run(make_business("thing", url=url), {}, idempotency_key="k")
    assert (err.value.message, err.value.retryable) == (texts.MISCONFIGURED, False)
    assert seen == []


def test_a_literal_non_http_url_is_refused_before_sending(settings: Settings, make_business):
    # Businesses from YAML are refused at load; one built in code, when it first runs.
    seen: list[httpx.Request] = []
    with executors_with(settings, lambda r: httpx.Response(200, json={}), seen) as ex:
        with pytest.raises(ConfigErrors) as err:
            ex.run(make_business("thing", url="ftp://x.test/a"), {}, idempotency_key="k")
    assert [str(e) for e in err.value.errors] == [
        "business thing:0: api.options.url: url 'ftp://x.test/a' must start with "
        "http://, https:// or ${VAR}",
    ]
    assert seen == []


def test_demo_host_is_served_in_process_even_with_a_custom_transport(
    settings: Settings, make_business
):
    seen: list[httpx.Request] = []
    with executors_with(settings, lambda r: httpx.Response(500), seen) as ex:
        result = ex.run(make_business("progress_query", ["application_no"]),
                        {"application_no": "SI20260915000001"}, idempotency_key="k")
    assert result["status"] == "办理中"
    assert seen == []


def test_cookies_are_not_carried_between_requests(settings: Settings, thing):
    seen: list[httpx.Request] = []
    answer = httpx.Response(200, json={}, headers={"Set-Cookie": "sid=citizen-a; Path=/"})
    with executors_with(settings, lambda r: answer, seen) as ex:
        ex.run(thing(), {}, idempotency_key="k")
        ex.run(thing(), {}, idempotency_key="k")
    assert "cookie" not in seen[1].headers
