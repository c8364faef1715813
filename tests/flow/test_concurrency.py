"""Two turns at once on one session never lose a collected field (real Redis)."""

from __future__ import annotations

import os
import threading
import time
import uuid

import pytest

from si_agent.engine.rules import RuleEngine
from si_agent.session import RedisStore

REDIS_URL = os.environ.get("SI_TEST_REDIS_URL", "redis://127.0.0.1:6379/15")


class SlowRules(RuleEngine):
    """The real rule engine, slowed so that concurrent turns overlap."""

    def decide(self, view, message, tools, on_text=None):
        time.sleep(0.02)
        return super().decide(view, message, tools, on_text)


@pytest.mark.redis
def test_concurrent_turns_keep_both_fields(make_controller, catalog):
    store = RedisStore(REDIS_URL, prefix=f"si-test-{uuid.uuid4().hex}:")
    if not store.ping():
        pytest.fail(f"Redis at {REDIS_URL} does not answer; start redis-server")
    ctl = make_controller(store=store, engine=SlowRules(catalog))
    sessions = [f"user-{i}" for i in range(10)]
    for sid in sessions:
        ctl.handle(sid, "我要转社保")
    messages = ("身份证号330122196303150178", "姓名张伟")
    barrier = threading.Barrier(len(sessions) * 2)
    errors: list[BaseException] = []

    def turn(sid: str, text: str) -> None:
        barrier.wait()
        try:
            ctl.handle(sid, text)
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=turn, args=(sid, m)) for sid in sessions for m in messages]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for sid in sessions:
        session = store.load(sid)
        assert session.fields["id_number"].value == "330122196303150178", sid
        assert session.fields["name"].value == "张伟", sid
        assert session.turn == 3 and session.version == 3
    for sid in sessions:
        store.delete(sid)
