"""Durable job records: one per submission, in the session store's backend.

    jobs = create_job_store(session_store)   # memory, sqlite or redis, like the sessions
"""

from __future__ import annotations

from si_agent.errors import UnknownBackendError
from si_agent.jobs.model import TERMINAL, Job, JobError, JobStatus, this_process
from si_agent.jobs.runner import JobRunner, ThreadRunner
from si_agent.jobs.store import JobStore, MemoryJobStore

__all__ = [
    "TERMINAL", "Job", "JobError", "JobRunner", "JobStatus", "JobStore", "MemoryJobStore",
    "ThreadRunner", "create_job_store", "this_process",
]


def create_job_store(session_store: object) -> JobStore:
    """The job store sharing ``session_store``'s backend (by its ``name``)."""
    name = getattr(session_store, "name", None)
    if name == "memory":
        return session_store.jobs  # type: ignore[attr-defined]
    if name == "sqlite":
        from si_agent.jobs.sqlite import SQLiteJobStore

        return SQLiteJobStore(session_store.path)  # type: ignore[attr-defined]
    if name == "redis":
        from si_agent.jobs.redis import RedisJobStore

        return RedisJobStore(session_store.client,  # type: ignore[attr-defined]
                             session_store.job_prefix)  # type: ignore[attr-defined]
    raise UnknownBackendError("job store for session store", str(name),
                              ("memory", "sqlite", "redis"))
