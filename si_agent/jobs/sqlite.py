"""``SQLiteJobStore``: jobs in a ``jobs`` table of the sessions' SQLite file."""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from si_agent.errors import JobConflict, StoreUnavailable
from si_agent.jobs.model import Job
from si_agent.jobs.store import JOB_TTL, applied, prepare
from si_agent.sqlite_connections import ThreadConnections

JOBS_SCHEMA = """
CREATE TABLE IF NOT EXISTS jobs (
    job_id     TEXT PRIMARY KEY,
    version    INTEGER NOT NULL,
    data       TEXT NOT NULL,
    updated_at REAL NOT NULL
);
"""


class SQLiteJobStore:
    name = "sqlite"

    def __init__(self, path: str | os.PathLike[str], *, timeout: float = 5.0) -> None:
        self.path = Path(path)
        self.timeout = timeout
        self._connections = ThreadConnections(self.path, timeout)
        # The schema, then the records older than JOB_TTL go (a float literal of ours).
        self._connections.create(
            JOBS_SCHEMA + f"DELETE FROM jobs WHERE updated_at < {time.time() - JOB_TTL!r};",
            "job store")

    def _connection(self) -> sqlite3.Connection:
        return self._connections.get()

    def load(self, job_id: str) -> Job | None:
        try:
            row = self._connection().execute(
                "SELECT version, data FROM jobs WHERE job_id = ?", (job_id,)).fetchone()
        except sqlite3.Error as exc:
            raise StoreUnavailable(f"SQLite job store at {self.path}: {exc}") from exc
        if row is None:
            return None
        job = Job.model_validate_json(row[1])
        job.version = row[0]
        return job

    def save(self, job: Job) -> None:
        prepared = prepare(job)
        conn = self._connection()
        try:
            with immediate(conn):
                write_job(conn, *prepared)
        except sqlite3.Error as exc:
            raise StoreUnavailable(f"SQLite job store at {self.path}: {exc}") from exc
        applied(job, prepared[1])


@contextmanager
def immediate(conn: sqlite3.Connection) -> Iterator[None]:
    """A write transaction (``BEGIN IMMEDIATE``): committed, or rolled back on any error."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def write_job(conn: sqlite3.Connection, expected: int, stored: Job, data: str) -> None:
    """Compare-and-set one job row inside the caller's write transaction."""
    row = conn.execute("SELECT version FROM jobs WHERE job_id = ?", (stored.id,)).fetchone()
    found = row[0] if row else 0
    if found != expected:
        raise JobConflict(stored.id, expected, found)
    conn.execute(
        "INSERT INTO jobs (job_id, version, data, updated_at) VALUES (?, ?, ?, ?) "
        "ON CONFLICT (job_id) DO UPDATE SET version = excluded.version, "
        "data = excluded.data, updated_at = excluded.updated_at",
        (stored.id, stored.version, data, stored.updated_at))
