"""A Celery worker killed mid-job: the API, the workers and the demo portal each in
their own process, sharing Redis (sessions and job records under a prefix of this
test, the broker in its own db). The job is an rpa job (Chromium fills the
portal's web form), so it really runs on the worker.

- Killed (``SIGKILL``, the whole process group) while the first page of a
  two-page form is being posted (the portal holds that POST, so it lands after
  the kill): the job is taken over (its owner is dead) by the next worker, which
  reopens the same draft and finishes it. One application, every collected value
  in it, a trace per attempt. Two ways:

  * ``race``: no take-over grace, and the portal holds the dead worker's POST
    until the second worker posts page 1, and applies it just before: the second
    worker's page-1 POST is stale (the interleaving that failed before: it landed
    on page 2, empty, and the job failed on "请填写离职日期"). The portal's fencing
    and the executor's "page moved" reading must hold alone.
  * ``grace``: the POST is held 8 s, the take-over grace is 10 s: the POST lands
    before the second worker starts, which finds the draft on page 2.
- Killed every time: after ``MAX_ATTEMPTS`` the job is not run again but
  reported as "outcome unknown" (never guessed as failed and resubmitted). No
  application, the collected fields kept in the session.

``tests/rpa/test_celery_jobs.py`` covers the kill during the final submit.
"""

from __future__ import annotations

import os
import signal
import time
import uuid
from collections.abc import Iterator

import httpx
import pytest

from si_agent import replies
from si_agent.flow.execution import MAX_ATTEMPTS
from si_agent.session.redis import redis_reachable
from si_agent.testing.processes import served_api, start_cli, stop
from tests.rpa.conftest import (  # noqa: F401 (fixtures)
    BUSINESSES,
    applications,
    chromium,
    fault,
    fresh_portal,
    portal,
)

REDIS = os.environ.get("SI_TEST_REDIS_URL", "redis://127.0.0.1:6379/15")
BROKER_DB = 13  # tests/rpa/test_celery_jobs.py uses 14
pytestmark = [pytest.mark.redis, pytest.mark.browser]

ZHANG_WEI = "330122196303150178"
UNEMPLOYMENT = {"id_number": ZHANG_WEI, "name": "张伟", "phone": "13800138001",
                "separation_date": "2026-10-31", "separation_reason": "劳动合同期满终止",
                "bank_card": "6222021202004568821"}
TRANSFER = {"from_city": "杭州市", "to_city": "苏州市", "id_number": ZHANG_WEI, "name": "张伟"}


@pytest.fixture
def grace() -> str:
    """SI_JOB_TAKEOVER_GRACE of the processes: none, so a test needs no extra wait."""
    return "0"


@pytest.fixture
def env(fresh_portal, tmp_path, grace) -> Iterator[dict[str, str]]:  # noqa: F811
    if not redis_reachable(REDIS, timeout=1.0):
        pytest.fail(f"Redis at {REDIS} does not answer", pytrace=False)
    import redis

    prefix = f"si_agent:test:{uuid.uuid4().hex}:"
    broker = f"{REDIS.rsplit('/', 1)[0]}/{BROKER_DB}"
    redis.Redis.from_url(broker).flushdb()  # this test's broker db only
    yield {**os.environ, "SI_BUSINESS_DIR": str(BUSINESSES), "SI_DATA_DIR": str(tmp_path),
           "SI_SESSION_STORE": "redis", "SI_REDIS_URL": REDIS,
           "SI_REDIS_PREFIX": prefix + "session:", "SI_JOB_BACKEND": "celery",
           "SI_CELERY_BROKER": broker, "SI_JOB_VISIBILITY_TIMEOUT": "5", "SI_KNOWLEDGE": "none",
           "SI_ENGINE": "rules", "SI_JWT_SECRET": "a shared secret of the worker fault tests",
           "SI_RATE_LIMIT": "1000 per minute", "SI_JOB_TAKEOVER_GRACE": grace}
    client = redis.Redis.from_url(REDIS)
    keys = list(client.scan_iter(match=prefix + "*"))
    if keys:
        client.delete(*keys)
    redis.Redis.from_url(broker).flushdb()


@pytest.fixture
def api(env, tmp_path) -> Iterator[httpx.Client]:
    with served_api(env, user=f"w-{uuid.uuid4().hex[:12]}", log=tmp_path / "api.log") as client:
        yield client


class Workers:
    """``si-agent worker`` processes started by a test; all are killed at its end."""

    def __init__(self, env: dict[str, str], logs) -> None:
        self.env, self.logs, self.procs = env, logs, []

    def start(self):
        proc = start_cli(self.env, "worker", log=self.logs / f"worker-{len(self.procs)}.log")
        self.procs.append(proc)
        return proc

    def stop_all(self) -> None:
        for proc in self.procs:
            stop(proc, signal.SIGKILL)


@pytest.fixture
def workers(env, tmp_path) -> Iterator[Workers]:
    pool = Workers(env, tmp_path)
    yield pool
    pool.stop_all()


def say(api: httpx.Client, *texts: str) -> dict:
    turn = {}
    for text in texts:
        response = api.post("/api/chat", json={"message": text})
        assert response.status_code == 200, response.text
        turn = response.json()
    return turn


def wait_for(api: httpx.Client, predicate, timeout: float = 120.0) -> dict:
    deadline = time.monotonic() + timeout
    turn: dict = {}
    while time.monotonic() < deadline:
        turn = api.get("/api/session").json()
        if predicate(turn):
            return turn
        time.sleep(0.3)
    raise AssertionError(f"timed out; last: {turn}")


def progress(turn: dict) -> str:
    return (turn.get("job") or {}).get("progress") or ""


def collected(turn: dict) -> set[str]:
    return {f["key"] for f in turn["fields"] if f["status"] == "collected"}


HELD = {"race": {"delay": 90.0, "until_next_post": True}, "grace": {"delay": 8.0}}


@pytest.mark.parametrize(("grace", "held"), [("0", "race"), ("10", "grace")],
                         ids=["race", "grace"])
def test_a_worker_killed_while_filling_page_one_is_resumed_from_the_draft(
        api, workers, fresh_portal, tmp_path, grace, held):  # noqa: F811
    first = workers.start()
    fault(fresh_portal, **HELD[held])  # the first form POST (page 1's 下一步) is held
    turn = say(api, "我要申领失业金", ZHANG_WEI, "张伟", "13800138001", "2026-10-31", "合同到期",
               "6222021202004568821", "确认")
    assert turn["state"] == "executing", turn["reply"]
    wait_for(api, lambda t: progress(t).startswith("正在填写"))
    time.sleep(2.0)  # page 1 is filled in milliseconds; its POST now waits in the portal
    assert applications(fresh_portal) == []
    stop(first, signal.SIGKILL)
    workers.start()
    done = wait_for(api, lambda t: t["state"] != "executing")
    assert done["state"] == "done", (done.get("notice"), done["job"])
    assert done["job"]["attempts"] == 2  # taken over by the second worker
    [application] = applications(fresh_portal)  # zero duplicates
    assert {k: application["values"][k] for k in UNEMPLOYMENT} == UNEMPLOYMENT  # zero lost
    assert done["result"]["application_no"] == application["application_no"]
    assert collected(done) == set(UNEMPLOYMENT)
    trace = tmp_path / "rpa" / done["job"]["id"]  # the killed attempt's too
    assert "attempt 1" in (trace / "actions.log").read_text("utf-8")
    second = (trace / "attempt-2" / "actions.log").read_text("utf-8")
    assert "attempt 2" in second
    if held == "race":  # its page-1 POST was stale: answered with page 2, filled next
        assert "portal answered 409" in second, second


def test_a_job_whose_workers_keep_dying_is_reported_not_run_again(api, workers, fresh_portal):  # noqa: F811
    # Each worker's submit waits in the portal, then fails without taking effect:
    # the worker is killed during the wait, so nothing is ever submitted.
    fault(fresh_portal, delay=8.0, status=503, count=MAX_ATTEMPTS)
    say(api, "我要把社保从杭州转到苏州", ZHANG_WEI, "张伟", "确认")
    for attempt in range(1, MAX_ATTEMPTS + 1):
        worker = workers.start()
        wait_for(api, lambda t, n=attempt: (t.get("job") or {}).get("attempts") == n
                 and progress(t) == "正在提交…")
        stop(worker, signal.SIGKILL)
    workers.start()  # takes the task once more, and reports instead of running it
    done = wait_for(api, lambda t: t["state"] != "executing")
    assert done["state"] == "failed", done
    assert done["job"]["status"] == "failed" and done["job"]["attempts"] == MAX_ATTEMPTS
    unknown = replies.render(replies.JOB_UNKNOWN, name="社保关系转移")
    assert unknown in (done.get("notice") or ""), done
    assert applications(fresh_portal) == []  # never a guessed second submission
    assert collected(done) == set(TRANSFER)
