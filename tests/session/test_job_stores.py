"""The JobStore contract, identical on every backend next to its session store."""

from __future__ import annotations

import pytest

from si_agent.errors import JobConflict, UnknownBackendError
from si_agent.jobs import Job, JobError, create_job_store
from si_agent.jobs.model import owner_is_dead, this_process


def job(**kw) -> Job:
    return Job(id=kw.pop("id", "j1"), session_id="s", business_id="card_loss",
               idempotency_key="k" * 32, values={"phone": "13800138001"}, **kw)


def test_create_load_and_compare_and_set(backend):
    store = backend.make()
    # Another process: a second store on the same backend (memory: the same store).
    jobs = create_job_store(store)
    other = create_job_store(store if backend.name == "memory" else backend.make())
    assert jobs.name == backend.name
    assert jobs.load("j1") is None
    created = job(status="running", owner=this_process())
    jobs.save(created)
    assert created.version == 1
    with pytest.raises(JobConflict):
        jobs.save(job())  # a second creation of the same id
    seen = other.load("j1")
    assert seen.model_dump() == created.model_dump()
    done = seen.model_copy(update={"status": "failed",
                                   "error": JobError(message="业务系统繁忙。", retryable=True)})
    other.save(done)
    assert done.version == 2
    with pytest.raises(JobConflict) as stale:
        jobs.save(created.model_copy(update={"status": "succeeded"}))  # written at version 1
    assert (stale.value.expected, stale.value.found) == (1, 2)
    again = jobs.load("j1")
    assert (again.status, again.error.message, again.version) == ("failed", "业务系统繁忙。", 2)


def test_only_one_of_two_claims_wins(backend):
    jobs = create_job_store(backend.make())
    jobs.save(job(status="queued"))
    first, second = jobs.load("j1"), jobs.load("j1")
    jobs.save(first.model_copy(update={"status": "running", "owner": "a:1"}))
    with pytest.raises(JobConflict):
        jobs.save(second.model_copy(update={"status": "running", "owner": "b:2"}))
    assert jobs.load("j1").owner == "a:1"


def test_stale_jobs():
    import os

    me = this_process()
    place, pid, token = me.split(":")
    assert pid == str(os.getpid()) and not owner_is_dead(me)
    assert owner_is_dead(f"{place}:999999999:{token}") and owner_is_dead(None)
    assert owner_is_dead(f"{place}:{pid}:0ldt0ken")  # this PID reused: that process is gone
    assert not owner_is_dead(f"another-host:{pid}:{token}")  # only its lease can tell
    assert not owner_is_dead(f"{place}:1:{token}")  # alive (PID 1) or not ours to judge
    live = job(status="running", owner=me, lease_until=2e9)
    assert not live.stale(now=1e9) and live.stale(now=3e9)
    assert job(status="running", owner=f"{place}:999999999:x", lease_until=2e9).stale(now=1e9)
    assert not job(status="succeeded", owner=None).stale()


def test_an_unknown_session_store_has_no_job_store():
    class Elsewhere:
        name = "cassandra"

    with pytest.raises(UnknownBackendError, match="valid names: memory, redis, sqlite"):
        create_job_store(Elsewhere())


def test_a_session_and_its_job_are_written_together_or_not_at_all(backend):
    from si_agent.errors import SessionConflict
    from si_agent.session.model import Session

    store = backend.make()
    jobs = create_job_store(store)
    session = Session(session_id="s", state="executing", job_id="j1")
    submitted = job(status="running", owner=this_process())
    store.save(session, job=submitted)
    assert (session.version, submitted.version) == (1, 1)
    assert store.load("s").job_id == "j1" and jobs.load("j1").status == "running"

    # A stale session: neither the session nor the job is written.
    stale = Session(session_id="s", state="done", job_id="j1")  # version 0
    with pytest.raises(SessionConflict):
        store.save(stale, job=submitted.model_copy(update={"status": "succeeded"}))
    assert jobs.load("j1").status == "running" and store.load("s").state == "executing"

    # A stale job (someone renewed it meanwhile): neither is written.
    renewed = jobs.load("j1")
    jobs.save(renewed.model_copy(update={"lease_until": 3e9}))
    session.state = "done"
    with pytest.raises(JobConflict):
        store.save(session, job=submitted.model_copy(update={"status": "succeeded"}))
    assert store.load("s").state == "executing" and store.load("s").version == 1
    current = jobs.load("j1")
    store.save(store.load("s").model_copy(update={"state": "done"}),
               job=current.model_copy(update={"status": "succeeded"}))
    assert (store.load("s").state, jobs.load("j1").status) == ("done", "succeeded")
