"""Two-phase, durable execution: job records, retries, conflicts, crashes, long jobs.

Submissions are counted in the demo backend's own database (``calls`` logs every
business request, ``applications`` every accepted one), never by mocks.
"""

from __future__ import annotations

import sqlite3

import pytest

from si_agent.core import actions as A
from si_agent.demo_backend import ensure_db, fail_next
from si_agent.errors import JobInProgress
from si_agent.session import MemoryStore

ZHANG = "330122196303150178"  # demo person 张伟
CHEN = "320102198809150628"  # demo person 陈静: her card is already reported lost


def query(settings, sql: str, *args) -> list[tuple]:
    ensure_db(settings.demo_backend_db)
    with sqlite3.connect(settings.demo_backend_db) as db:
        return db.execute(sql, args).fetchall()


def calls(settings, business: str) -> list[tuple]:
    return query(settings, "SELECT idempotency_key, status FROM calls WHERE business_id = ?",
                 business)


def applications(settings, business: str) -> int:
    return query(settings, "SELECT COUNT(*) FROM applications WHERE business_id = ?",
                 business)[0][0]


def to_confirming(ctl, user: str, *messages: str):
    for text in messages:
        turn = ctl.handle(user, text)
    assert turn.state == "confirming", turn.reply
    return turn


def card_loss(ctl, user: str, id_number: str, name: str):
    return to_confirming(ctl, user, "我的社保卡丢了，要挂失", id_number, name, "13800138005",
                         "正式挂失")


def test_a_refusal_that_retrying_cannot_fix_is_not_offered_for_retry(controller, settings):
    card_loss(controller, "u", CHEN, "陈静")
    turn = controller.handle("u", "确认")
    assert turn.state == "failed"
    assert "该社保卡已处于挂失状态，不能重复挂失" in turn.reply
    assert "重试" not in turn.reply and "12333" in turn.reply
    assert turn.job.status == "failed"
    session = controller.store.load("u")
    assert session.retryable is False
    business = controller.catalog["card_loss"]
    assert "retry_submit" not in A.tool_names(controller.toolset("failed", business, None,
                                                                  session.retryable))
    assert len(calls(settings, "card_loss")) == 1
    for text in ("重试", "再提交一次", "确认"):
        turn = controller.handle("u", text)
        assert turn.state == "failed"
        assert "无法重新提交" in turn.reply
    assert len(calls(settings, "card_loss")) == 1  # "重试" submitted nothing
    turn = controller.handle("u", "取消")
    assert turn.state == "idle"


def test_a_retryable_503_then_success_reuses_the_key_and_applies_once(controller, settings):
    to_confirming(controller, "u", "我要转社保", "从杭州转到苏州", ZHANG, "张伟")
    before = applications(settings, "social_transfer")
    fail_next(settings.demo_backend_db, 1, 503)
    turn = controller.handle("u", "确认")
    assert turn.state == "failed" and "重试" in turn.reply
    first_job = controller.jobs.load(turn.job.id)
    assert (first_job.status, first_job.error.retryable) == ("failed", True)
    turn = controller.handle("u", "重试")
    assert turn.state == "done"
    second_job = controller.jobs.load(turn.job.id)
    assert second_job.id != first_job.id
    assert second_job.idempotency_key == first_job.idempotency_key
    assert calls(settings, "social_transfer") == [(first_job.idempotency_key, 503),
                                                  (first_job.idempotency_key, 200)]
    assert applications(settings, "social_transfer") == before + 1


class ConflictOnce(MemoryStore):
    """A real concurrent writer: the first time the session is saved in confirming →
    executing, another turn's save lands first."""

    def __init__(self) -> None:
        super().__init__()
        self.conflicts = 0

    def save(self, session, job=None):
        if session.state == "executing" and not self.conflicts:
            self.conflicts += 1
            other = self.load(session.session_id)
            other.turn += 0  # unchanged data, a newer version: what a parallel save leaves
            super().save(other)
        super().save(session, job)


def test_a_save_conflict_while_confirming_submits_once(make_controller, settings):
    store = ConflictOnce()
    ctl = make_controller(store=store)
    to_confirming(ctl, "u", "我要转社保", "从杭州转到苏州", ZHANG, "张伟")
    before = len(calls(settings, "social_transfer"))
    turn = ctl.handle("u", "确认")
    assert store.conflicts == 1
    assert turn.state == "done" and turn.result["application_no"].startswith("SI")
    assert len(calls(settings, "social_transfer")) == before + 1
    assert turn.reply.count("已提交，受理编号") == 1
    assert len(store.jobs._records) == 1  # the lost save wrote no job either


# -- a process that dies between the two phases ----------------------------------------

CHILD = r'''
import os
import sys
from pathlib import Path

from si_agent.config.loader import load_businesses
from si_agent.config.settings import Settings
from si_agent.engine.rules import RuleEngine
from si_agent.executor import Executors, HttpExecutor
from si_agent.flow.controller import Controller
from si_agent.session import SQLiteStore

root, data, resumable = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3] == "1"
settings = Settings(business_dir=root / "businesses", data_dir=data)


class CrashAfterSubmit(HttpExecutor):
    """The crash hook: the backend has the request; this process dies before the answer."""

    def run(self, *args, **kwargs):
        super().run(*args, **kwargs)
        os._exit(3)


CrashAfterSubmit.resumable = resumable
catalog = load_businesses(settings.business_dir)
executors = Executors(settings, executors={"http": CrashAfterSubmit.from_settings(settings)})
ctl = Controller(catalog, SQLiteStore(data / "sessions.db"), RuleEngine(catalog), executors)
for text in ("我要转社保", "从杭州转到苏州", "330122196303150178", "张伟"):
    ctl.handle("u", text)
ctl.handle("u", "确认")
sys.exit(0)  # not reached: the hook ends the process
'''


class OpaqueHttp:
    """The real HTTP executor, declared not resumable (as a web form filled by RPA is)."""

    resumable = False

    def __init__(self, settings):
        from si_agent.executor import HttpExecutor

        self.inner = HttpExecutor.from_settings(settings)
        self.kind, self.Options, self.long_running = "http", self.inner.Options, False

    def run(self, *args, **kwargs):
        return self.inner.run(*args, **kwargs)


def crash_then_restart(tmp_path, settings, resumable: bool, grace: float = 0.0):
    import os
    import subprocess
    import sys

    from si_agent.config.loader import load_businesses
    from si_agent.engine.rules import RuleEngine
    from si_agent.executor import Executors
    from si_agent.flow.controller import Controller
    from si_agent.session import SQLiteStore

    root = settings.business_dir.parent
    script = tmp_path / "child.py"
    script.write_text(CHILD, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(root)}
    done = subprocess.run([sys.executable, str(script), str(root), str(settings.data_dir),
                           "1" if resumable else "0"], env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 3, done.stderr[-2000:]
    catalog = load_businesses(settings.business_dir)
    injected = None if resumable else {"http": OpaqueHttp(settings)}
    executors = Executors(settings, executors=injected)
    ctl = Controller(catalog, SQLiteStore(settings.data_dir / "sessions.db"),
                     RuleEngine(catalog), executors)
    ctl.driver.takeover_grace = grace  # 0: taken over as soon as the process is found dead
    session = ctl.store.load("u")
    job = ctl.jobs.load(session.job_id)
    assert (session.state, job.status, job.attempts) == ("executing", "running", 1)
    return ctl, executors


def test_a_crash_after_submitting_is_resumed_without_a_second_application(tmp_path, settings):
    ctl, executors = crash_then_restart(tmp_path, settings, resumable=True)
    with executors:
        turn = ctl.handle("u", "办好了吗？")
    assert turn.state == "done" and "已提交，受理编号" in turn.reply
    keys = calls(settings, "social_transfer")
    assert len(keys) == 2 and keys[0][0] == keys[1][0]  # the same key, sent twice
    rows = query(settings, "SELECT application_no FROM applications WHERE business_id = "
                 "'social_transfer' AND id_number = ?", ZHANG)
    assert rows == [(turn.result["application_no"],)]  # one application, the first one
    assert ctl.jobs.load(turn.job.id).attempts == 2


def test_a_job_whose_process_died_is_taken_over_only_after_the_grace(tmp_path, settings):
    import time

    ctl, executors = crash_then_restart(tmp_path, settings, resumable=True, grace=1.5)
    with executors:
        turn = ctl.handle("u", "办好了吗？")
        assert turn.state == "executing" and "正在办理中" in turn.reply
        job = ctl.jobs.load(turn.job.id)
        assert job.attempts == 1 and job.owner_gone_at is not None  # found dead, not taken
        assert len(calls(settings, "social_transfer")) == 1
        time.sleep(1.6)
        turn = ctl.handle("u", "办好了吗？")
    assert turn.state == "done" and "已提交，受理编号" in turn.reply
    job = ctl.jobs.load(turn.job.id)
    assert job.attempts == 2 and job.owner_gone_at is None
    assert len(calls(settings, "social_transfer")) == 2  # resumed once, same key


def test_a_crash_with_an_executor_that_cannot_resume_is_reported_not_resubmitted(
        tmp_path, settings):
    ctl, executors = crash_then_restart(tmp_path, settings, resumable=False)
    with executors:
        turn = ctl.handle("u", "办好了吗？")
        assert turn.state == "failed"
        assert "暂时无法确认【社保关系转移】是否已经提交成功" in turn.reply
        assert len(calls(settings, "social_transfer")) == 1
        turn = ctl.handle("u", "重试")
    assert "无法重新提交" in turn.reply
    assert len(calls(settings, "social_transfer")) == 1


# -- leases, crashes and resets ---------------------------------------------------------


class SlowHttp:
    """The real HTTP executor, answering only after ``delay`` seconds (a slow backend)."""

    def __init__(self, settings, delay: float, resumable: bool = True) -> None:
        from si_agent.executor import HttpExecutor

        self.inner = HttpExecutor.from_settings(settings)
        self.kind, self.Options, self.long_running = "http", self.inner.Options, False
        self.resumable, self.delay, self.runs = resumable, delay, 0

    def run(self, *args, **kwargs):
        import time

        self.runs += 1
        time.sleep(self.delay)
        return self.inner.run(*args, **kwargs)


def two_workers(settings, tmp_path, delay: float):
    """Two controllers on one SQLite store: two gunicorn workers of one machine."""
    from si_agent.config.loader import load_businesses
    from si_agent.engine.rules import RuleEngine
    from si_agent.executor import Executors
    from si_agent.flow.controller import Controller
    from si_agent.session import SQLiteStore

    catalog = load_businesses(settings.business_dir)
    workers = []
    for _ in range(2):
        slow = SlowHttp(settings, delay)
        ctl = Controller(catalog, SQLiteStore(tmp_path / "sessions.db"), RuleEngine(catalog),
                         Executors(settings, executors={"http": slow}))
        ctl.driver.lease, ctl.driver.heartbeat = 0.4, 0.1
        workers.append((ctl, slow))
    return workers


def test_a_slow_job_keeps_its_lease_and_is_not_taken_over(settings, tmp_path):
    import threading
    import time

    (a, slow_a), (b, slow_b) = two_workers(settings, tmp_path, delay=1.5)
    to_confirming(a, "u", "我要转社保", "从杭州转到苏州", ZHANG, "张伟")
    before = len(calls(settings, "social_transfer"))
    done: list = []
    worker = threading.Thread(target=lambda: done.append(a.handle("u", "确认")))
    worker.start()
    time.sleep(0.8)  # twice the lease: only the heartbeat keeps the job
    turn = b.handle("u", "办好了吗？")
    assert turn.state == "executing" and "正在办理中" in turn.reply
    with pytest.raises(JobInProgress):
        b.reset("u")
    worker.join(timeout=10)
    assert done[0].state == "done" and "已提交，受理编号" in done[0].reply
    assert (slow_a.runs, slow_b.runs) == (1, 0)
    assert len(calls(settings, "social_transfer")) == before + 1
    assert b.handle("u", "谢谢").state == "done"


class Broken:
    kind, long_running = "http", False

    def __init__(self, settings, resumable: bool) -> None:
        from si_agent.executor import HttpExecutor

        self.Options, self.resumable = HttpExecutor.Options, resumable

    def run(self, *args, **kwargs):
        raise RuntimeError("socket closed after the request was sent: 330122196303150178")


@pytest.mark.parametrize("resumable", [True, False])
def test_an_executor_crash_is_retryable_only_if_the_executor_is_resumable(
        make_controller, settings, caplog, resumable):
    from si_agent.executor import Executors

    ctl = make_controller()
    ctl.executor = Executors(settings, executors={"http": Broken(settings, resumable)})
    to_confirming(ctl, "u", "我要转社保", "从杭州转到苏州", ZHANG, "张伟")
    turn = ctl.handle("u", "确认")
    assert turn.state == "failed" and "业务系统处理时出现异常" in turn.reply
    assert ("重试" in turn.reply) is resumable
    assert ZHANG not in caplog.text and "RuntimeError" in caplog.text
