"""``MemoryStore``: sessions in a dict, for tests, demos and single-process use.

Records are kept as JSON strings, not live objects, so a caller that keeps
mutating a session after ``save`` cannot change what is stored.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

from si_agent.errors import SessionConflict
from si_agent.jobs.model import Job
from si_agent.jobs.store import MemoryJobStore
from si_agent.jobs.store import applied as job_applied
from si_agent.jobs.store import prepare as prepare_job
from si_agent.session.base import (
    EXPIRY_MARK_TTL,
    check_ttl,
    expiry_mark,
    parse_record,
    prepare_save,
)
from si_agent.session.denylist import MemoryDenylist
from si_agent.session.model import Session

_PURGE_EVERY = 60.0


@dataclass(frozen=True)
class _Record:
    version: int
    data: str
    expires_at: float  # time.monotonic()


class MemoryStore:
    """Sessions in this process's memory; lost on restart, not shared by workers."""

    name = "memory"

    def __init__(self, ttl: float = 1800, *, mark_key: bytes | None = None) -> None:
        self.ttl = check_ttl(ttl)
        self._mark_key = mark_key  # keys the expiry marks (base.expiry_mark)
        self._records: dict[str, _Record] = {}
        self._marks: dict[str, float] = {}  # expiry marks: digest -> expires (monotonic)
        self._lock = threading.Lock()
        self.jobs = MemoryJobStore()  # this store's jobs (see si_agent.jobs)
        self.denylist = MemoryDenylist()  # its revoked tokens (si_agent.session.denylist)
        self._next_purge = time.monotonic() + min(self.ttl, _PURGE_EVERY)

    def __repr__(self) -> str:
        return f"MemoryStore(ttl={self.ttl})"

    def load(self, session_id: str) -> Session | None:
        now = time.monotonic()
        with self._lock:
            record = self._records.get(session_id)
            if record is not None and record.expires_at <= now:
                del self._records[session_id]
                record = None
        if record is None:
            return None
        session = parse_record(record.data, record.version, session_id, self.name)
        if session is None:
            with self._lock:
                if self._records.get(session_id) is record:
                    del self._records[session_id]
        return session

    def save(self, session: Session, job: Job | None = None) -> None:
        pending = prepare_save(session)
        stored_job = prepare_job(job) if job is not None else None
        now = time.monotonic()
        with self._lock, self.jobs.lock:
            record = self._records.get(pending.session_id)
            found = record.version if record is not None and record.expires_at > now else 0
            if found != pending.expected:
                raise SessionConflict(pending.session_id, expected=pending.expected, found=found)
            if job is not None and stored_job is not None:
                self.jobs.check(job.id, stored_job[0])
            self._records[pending.session_id] = _Record(
                pending.version, pending.data, now + self.ttl
            )
            if pending.expected == 0:
                self._marks[expiry_mark(pending.session_id, self._mark_key)] = now + EXPIRY_MARK_TTL
            if job is not None and stored_job is not None:
                self.jobs.put(stored_job[1], stored_job[2])
            if now >= self._next_purge:
                self._purge(now)
        pending.apply(session)
        if job is not None and stored_job is not None:
            job_applied(job, stored_job[1])

    def delete(self, session_id: str) -> None:
        with self._lock:
            self._records.pop(session_id, None)
            self._marks.pop(expiry_mark(session_id, self._mark_key), None)

    def expired(self, session_id: str) -> bool:
        with self._lock:
            return self._marks.pop(expiry_mark(session_id, self._mark_key), 0.0) > time.monotonic()

    def ping(self) -> bool:
        return True

    def _purge(self, now: float) -> None:
        """Drop expired records; called with the lock held."""
        for key in [k for k, r in self._records.items() if r.expires_at <= now]:
            del self._records[key]
        for mark in [m for m, expires in self._marks.items() if expires <= now]:
            del self._marks[mark]
        self._next_purge = now + min(self.ttl, _PURGE_EVERY)
