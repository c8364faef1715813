"""The ``JobStore`` protocol and its in-memory backend.

Jobs live in the session store's backend (memory, SQLite, Redis: see
``create_job_store``). The contract, identical in every backend:

* ``load(job_id)`` returns the job or ``None``;
* ``save(job)`` is a compare-and-set on ``job.version`` (0: the job must not
  exist yet). On success the stored version is ``version + 1``, set on ``job``
  in place; otherwise ``JobConflict`` is raised and nothing is written.
"""

from __future__ import annotations

import threading
import time
from typing import Protocol, runtime_checkable

from si_agent.errors import JobConflict
from si_agent.jobs.model import Job

JOB_TTL = 7 * 24 * 3600  # job records outlive sessions: a citizen may ask days later


@runtime_checkable
class JobStore(Protocol):
    def load(self, job_id: str) -> Job | None:
        """The job, or ``None`` if there is none (or it expired)."""
        ...

    def save(self, job: Job) -> None:
        """Compare-and-set on ``job.version``; raises ``JobConflict``."""
        ...


def prepare(job: Job) -> tuple[int, Job, str]:
    """(expected version, the job as stored, its JSON) for saving ``job``."""
    stored = job.model_copy(update={"version": job.version + 1, "updated_at": time.time()})
    return job.version, stored, stored.model_dump_json()


def applied(job: Job, stored: Job) -> None:
    """Mirror a successful write on the caller's object."""
    job.version = stored.version
    job.updated_at = stored.updated_at


class MemoryJobStore:
    """Jobs in this process's memory (with ``MemoryStore`` sessions)."""

    name = "memory"

    def __init__(self) -> None:
        self._records: dict[str, tuple[int, str]] = {}
        self.lock = threading.Lock()  # also taken by MemoryStore.save(session, job)

    def load(self, job_id: str) -> Job | None:
        with self.lock:
            record = self._records.get(job_id)
        if record is None:
            return None
        job = Job.model_validate_json(record[1])
        job.version = record[0]
        return job

    def save(self, job: Job) -> None:
        expected, stored, data = prepare(job)
        with self.lock:
            self.check(job.id, expected)
            self.put(stored, data)
        applied(job, stored)

    def check(self, job_id: str, expected: int) -> None:
        """Raise ``JobConflict`` unless the stored version is ``expected`` (lock held)."""
        found = self._records.get(job_id, (0, ""))[0]
        if found != expected:
            raise JobConflict(job_id, expected, found)

    def put(self, stored: Job, data: str) -> None:
        """Write a prepared record (lock held, version checked)."""
        self._records[stored.id] = (stored.version, data)
