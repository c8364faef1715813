"""``SQLiteStore``: sessions in one SQLite file, shared by the processes of one machine.

One table ``sessions(session_id PRIMARY KEY, version, data, updated_at)`` in WAL
mode, so loads never wait for saves. Each thread (and each forked process)
uses its own connection. ``save`` runs in a ``BEGIN IMMEDIATE`` transaction:
SQLite's write lock makes read-version / compare / write one atomic step across
threads and processes. Expired rows are ignored by ``load``, count as missing
for ``save`` and are purged every few minutes.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import time
from pathlib import Path

from si_agent.errors import SessionConflict, StoreUnavailable
from si_agent.jobs.model import Job
from si_agent.jobs.sqlite import JOBS_SCHEMA, immediate, write_job
from si_agent.jobs.store import applied as job_applied
from si_agent.jobs.store import prepare as prepare_job
from si_agent.session.base import (
    EXPIRY_MARK_TTL,
    as_version,
    check_ttl,
    expiry_mark,
    parse_record,
    prepare_save,
)
from si_agent.session.model import Session
from si_agent.sqlite_connections import ThreadConnections

logger = logging.getLogger(__name__)

_PURGE_EVERY = 300.0

_SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (
    session_id TEXT PRIMARY KEY,
    version    INTEGER NOT NULL,
    data       TEXT NOT NULL,
    updated_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS sessions_updated_at ON sessions (updated_at);
CREATE TABLE IF NOT EXISTS expiry_marks (
    mark       TEXT PRIMARY KEY,
    expires_at REAL NOT NULL
);
"""

_UPSERT = """
INSERT INTO sessions (session_id, version, data, updated_at) VALUES (?, ?, ?, ?)
ON CONFLICT (session_id) DO UPDATE SET
    version = excluded.version, data = excluded.data, updated_at = excluded.updated_at
"""


class SQLiteStore:
    """Sessions in the SQLite file at ``path`` (its directory is created)."""

    name = "sqlite"

    def __init__(self, path: str | os.PathLike[str], ttl: float = 1800, *, timeout: float = 5.0,
                 mark_key: bytes | None = None):
        if str(path) == ":memory:" or str(path).startswith("file::memory:"):
            raise ValueError(
                "SQLiteStore needs a file (each thread has its own connection); "
                "use MemoryStore for in-memory sessions"
            )
        self.path = Path(path)
        self.ttl = check_ttl(ttl)
        self.timeout = timeout
        self._mark_key = mark_key  # keys the expiry marks (base.expiry_mark)
        self._connections = ThreadConnections(self.path, timeout)
        self._next_purge = 0.0
        # Sessions hold personal data: the file is readable by its owner only.
        self._connections.create(_SCHEMA + JOBS_SCHEMA, "session store", private=True)
        self._maybe_purge()

    def __repr__(self) -> str:
        return f"SQLiteStore({str(self.path)!r}, ttl={self.ttl})"

    def load(self, session_id: str) -> Session | None:
        try:
            row = (
                self._connection()
                .execute(
                    "SELECT version, data FROM sessions WHERE session_id = ? AND updated_at > ?",
                    (session_id, time.time() - self.ttl),
                )
                .fetchone()
            )
        except sqlite3.Error as exc:
            raise self._unavailable("load", exc) from exc
        if row is None:
            return None
        version, data = row
        session = parse_record(data, version, session_id, self.name)
        if session is None:
            self._discard(session_id, version, data)
        return session

    def save(self, session: Session, job: Job | None = None) -> None:
        pending = prepare_save(session)
        prepared = prepare_job(job) if job is not None else None
        try:
            conn = self._connection()
            with immediate(conn):
                row = conn.execute(
                    "SELECT version, updated_at FROM sessions WHERE session_id = ?",
                    (pending.session_id,),
                ).fetchone()
                found = 0
                if row is not None and row[1] > pending.updated_at - self.ttl:
                    found = as_version(row[0]) or 0  # an unreadable version counts as missing
                if found != pending.expected:
                    raise SessionConflict(
                        pending.session_id, expected=pending.expected, found=found
                    )
                if prepared is not None:
                    write_job(conn, *prepared)  # JobConflict rolls the session back too
                conn.execute(
                    _UPSERT,
                    (pending.session_id, pending.version, pending.data, pending.updated_at),
                )
                if pending.expected == 0:
                    conn.execute("INSERT OR REPLACE INTO expiry_marks VALUES (?, ?)",
                                 (expiry_mark(pending.session_id, self._mark_key),
                                  pending.updated_at + EXPIRY_MARK_TTL))
        except sqlite3.Error as exc:
            raise self._unavailable("save", exc) from exc
        pending.apply(session)
        if job is not None and prepared is not None:
            job_applied(job, prepared[1])
        self._maybe_purge()

    def delete(self, session_id: str) -> None:
        try:
            conn = self._connection()
            with immediate(conn):
                conn.execute("DELETE FROM sessions WHERE session_id = ?", (session_id,))
                conn.execute("DELETE FROM expiry_marks WHERE mark = ?", (expiry_mark(session_id, self._mark_key),))
        except sqlite3.Error as exc:
            raise self._unavailable("delete", exc) from exc

    def expired(self, session_id: str) -> bool:
        try:
            cursor = self._connection().execute(
                "DELETE FROM expiry_marks WHERE mark = ? AND expires_at > ?",
                (expiry_mark(session_id, self._mark_key), time.time()))
        except sqlite3.Error as exc:
            raise self._unavailable("expired", exc) from exc
        return cursor.rowcount > 0

    def ping(self) -> bool:
        try:
            self._connection().execute("SELECT 1 FROM sessions LIMIT 1").fetchall()
        except sqlite3.Error:
            return False
        return True

    def purge_expired(self) -> int:
        """Delete expired rows now; returns how many were deleted."""
        try:
            conn = self._connection()
            cursor = conn.execute(
                "DELETE FROM sessions WHERE updated_at <= ?", (time.time() - self.ttl,)
            )
            deleted = cursor.rowcount
            conn.execute("DELETE FROM expiry_marks WHERE expires_at <= ?", (time.time(),))
        except sqlite3.Error as exc:
            raise self._unavailable("purge", exc) from exc
        self._next_purge = time.monotonic() + min(self.ttl, _PURGE_EVERY)
        return deleted

    def close(self) -> None:
        """Close the calling thread's connection (others close when their thread ends)."""
        self._connections.close()

    def _connection(self) -> sqlite3.Connection:
        return self._connections.get()

    def _discard(self, session_id: str, version: object, data: object) -> None:
        """Delete an unreadable row, unless a concurrent save replaced it meanwhile."""
        try:
            self._connection().execute(
                "DELETE FROM sessions WHERE session_id = ? AND version IS ? AND data IS ?",
                (session_id, version, data),
            )
        except sqlite3.Error as exc:
            raise self._unavailable("load", exc) from exc

    def _maybe_purge(self) -> None:
        if time.monotonic() < self._next_purge:
            return
        try:
            deleted = self.purge_expired()
        except StoreUnavailable as exc:
            # A failed purge must not fail the save that triggered it; try again later.
            logger.warning("sqlite session store: purge of expired sessions failed: %s", exc)
            self._next_purge = time.monotonic() + min(self.ttl, _PURGE_EVERY)
            return
        if deleted:
            logger.debug("sqlite session store: purged %d expired sessions", deleted)

    def _unavailable(self, operation: str, exc: sqlite3.Error) -> StoreUnavailable:
        return StoreUnavailable(
            f"SQLite session store at {self.path} failed during {operation}: {exc}"
        )
