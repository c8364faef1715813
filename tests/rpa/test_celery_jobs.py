"""Long-running jobs on Celery: the API, a worker and the portal each in their own
process, sharing Redis (sessions, job records, the broker). A worker killed in the
middle of a job: the job is run again by another worker from its draft, and the
portal still holds exactly one application."""

from __future__ import annotations

import os
import signal
import time
import uuid
from collections.abc import Iterator

import httpx
import pytest

from si_agent.session.redis import redis_reachable
from si_agent.testing.processes import served_api, start_cli, stop
from tests.rpa.conftest import BUSINESSES, applications, fault

REDIS = os.environ.get("SI_TEST_REDIS_URL", "redis://127.0.0.1:6379/15")
pytestmark = pytest.mark.redis


@pytest.fixture
def env(fresh_portal, tmp_path) -> Iterator[dict[str, str]]:
    if not redis_reachable(REDIS, timeout=1.0):
        pytest.fail(f"Redis at {REDIS} does not answer", pytrace=False)
    prefix = f"si_agent:test:{uuid.uuid4().hex}:"
    broker = REDIS.rsplit("/", 1)[0] + "/14"
    yield {**os.environ, "SI_BUSINESS_DIR": str(BUSINESSES), "SI_DATA_DIR": str(tmp_path),
           "SI_SESSION_STORE": "redis", "SI_REDIS_URL": REDIS, "SI_REDIS_PREFIX": prefix + "session:",
           "SI_JOB_BACKEND": "celery", "SI_CELERY_BROKER": broker,
           "SI_JOB_VISIBILITY_TIMEOUT": "5", "SI_KNOWLEDGE": "none",
           "SI_JWT_SECRET": "a shared secret of the test deployment",
           "SI_RATE_LIMIT": "1000 per minute"}
    import redis

    client = redis.Redis.from_url(REDIS)
    keys = list(client.scan_iter(match=prefix + "*"))
    if keys:
        client.delete(*keys)
    redis.Redis.from_url(broker).flushdb()


@pytest.fixture
def api(env) -> Iterator[httpx.Client]:
    with served_api(env, user="celery-user", timeout=20.0, client_timeout=10) as client:
        yield client


def say(api: httpx.Client, *texts: str) -> dict:
    turn = {}
    for text in texts:
        turn = api.post("/api/chat", json={"message": text}).json()
    return turn


def wait_for(api: httpx.Client, predicate, timeout: float = 90.0) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        turn = api.get("/api/session").json()
        if predicate(turn):
            return turn
        time.sleep(0.3)
    raise AssertionError(f"timed out; last: {turn}")


def test_a_worker_runs_the_job(env, api, fresh_portal):
    worker = start_cli(env, "worker")
    try:
        turn = say(api, "我要把社保从杭州转到苏州", "330122196303150178", "张伟", "确认")
        assert turn["state"] == "executing" and turn["job"]["status"] == "running"
        done = wait_for(api, lambda t: t["state"] != "executing")
        assert done["state"] == "done", done
        [app] = applications(fresh_portal)
        assert done["result"]["application_no"] == app["application_no"]
    finally:
        stop(worker)


def test_a_worker_killed_mid_job_leaves_one_application(env, api, fresh_portal):
    first = start_cli(env, "worker")
    second = None
    try:
        fault(fresh_portal, delay=4.0)  # the submit takes a while: time to kill the worker
        say(api, "我要把社保从杭州转到苏州", "330122196303150178", "张伟", "确认")
        wait_for(api, lambda t: (t.get("job") or {}).get("progress") == "正在提交…")
        stop(first, signal.SIGKILL)  # the whole worker, mid-submit
        second = start_cli(env, "worker")
        done = wait_for(api, lambda t: t["state"] != "executing", timeout=120)
        assert done["state"] == "done", done
        assert done["job"]["attempts"] == 2  # run again by the second worker
        [app] = applications(fresh_portal)  # the portal finished the first submit; no second
        assert done["result"]["application_no"] == app["application_no"]
    finally:
        stop(first, signal.SIGKILL)
        if second is not None:
            stop(second)
