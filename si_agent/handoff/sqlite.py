"""``SQLiteTicketStore``: tickets in tables of the sessions' SQLite file.

Every write runs in a ``BEGIN IMMEDIATE`` transaction, so the compare-and-set of a
save (and thus which of two staff members takes a ticket) is decided by SQLite's
write lock across the threads and processes of the machine.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from si_agent.errors import StoreUnavailable
from si_agent.handoff.model import Ticket
from si_agent.handoff.store import RETENTION, stored
from si_agent.jobs.sqlite import immediate
from si_agent.sqlite_connections import ThreadConnections

SCHEMA = """
CREATE TABLE IF NOT EXISTS handoff_tickets (
    number     TEXT PRIMARY KEY,
    session_id TEXT NOT NULL,
    open       INTEGER NOT NULL,
    created    REAL NOT NULL,
    version    INTEGER NOT NULL,
    data       TEXT NOT NULL,
    expires    REAL
);
CREATE INDEX IF NOT EXISTS handoff_open ON handoff_tickets (open, created);
CREATE INDEX IF NOT EXISTS handoff_session ON handoff_tickets (session_id, open);
CREATE TABLE IF NOT EXISTS handoff_seq (day TEXT PRIMARY KEY, n INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS handoff_presence (name TEXT PRIMARY KEY, until REAL NOT NULL);
"""


class SQLiteTicketStore:
    name = "sqlite"

    def __init__(self, path: str | os.PathLike[str], *, timeout: float = 5.0) -> None:
        self.path = Path(path)
        self._connections = ThreadConnections(self.path, timeout)
        self._connections.create(
            SCHEMA + f"DELETE FROM handoff_tickets WHERE expires < {time.time()!r};",
            "hand-off ticket store", private=True)

    def __repr__(self) -> str:
        return f"SQLiteTicketStore({str(self.path)!r})"

    @contextmanager
    def _conn(self) -> Iterator[sqlite3.Connection]:
        try:
            yield self._connections.get()
        except sqlite3.Error as exc:
            raise StoreUnavailable(f"SQLite hand-off ticket store at {self.path}: {exc}") \
                from exc

    def load(self, number: str) -> Ticket | None:
        with self._conn() as conn:
            row = conn.execute(
                "SELECT version, data FROM handoff_tickets WHERE number = ? "
                "AND (expires IS NULL OR expires > ?)", (number, time.time())).fetchone()
        if row is None:
            return None
        ticket = Ticket.model_validate_json(row[1])
        ticket.version = row[0]
        return ticket

    def save(self, ticket: Ticket) -> bool:
        expected, version, data = stored(ticket)
        expires = None if ticket.open else time.time() + RETENTION
        with self._conn() as conn, immediate(conn):
            row = conn.execute("SELECT version FROM handoff_tickets WHERE number = ?",
                               (ticket.number,)).fetchone()
            if (row[0] if row else 0) != expected:
                return False
            conn.execute(
                "INSERT INTO handoff_tickets (number, session_id, open, created, version, data, "
                "expires) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (number) DO UPDATE SET "
                "open = excluded.open, version = excluded.version, data = excluded.data, "
                "expires = excluded.expires",
                (ticket.number, ticket.session_id, int(ticket.open), ticket.created, version,
                 data, expires))
        ticket.version = version
        return True

    def open_numbers(self) -> list[str]:
        with self._conn() as conn:
            rows = conn.execute("SELECT number FROM handoff_tickets WHERE open = 1 "
                                "ORDER BY created, number").fetchall()
        return [r[0] for r in rows]

    def open_for(self, session_id: str) -> str | None:
        with self._conn() as conn:
            row = conn.execute("SELECT number FROM handoff_tickets WHERE session_id = ? AND "
                               "open = 1 ORDER BY created DESC LIMIT 1", (session_id,)).fetchone()
        return row[0] if row else None

    def next_seq(self, day: str) -> int:
        with self._conn() as conn, immediate(conn):
            conn.execute("INSERT INTO handoff_seq (day, n) VALUES (?, 1) "
                         "ON CONFLICT (day) DO UPDATE SET n = n + 1", (day,))
            return int(conn.execute("SELECT n FROM handoff_seq WHERE day = ?",
                                    (day,)).fetchone()[0])

    def beat(self, name: str, until: float) -> None:
        with self._conn() as conn:
            conn.execute("INSERT INTO handoff_presence (name, until) VALUES (?, ?) "
                         "ON CONFLICT (name) DO UPDATE SET until = excluded.until", (name, until))

    def present(self, now: float) -> list[str]:
        with self._conn() as conn:
            rows = conn.execute("SELECT name FROM handoff_presence WHERE until > ? ORDER BY name",
                                (now,)).fetchall()
        return [r[0] for r in rows]

    def leave(self, name: str) -> None:
        with self._conn() as conn:
            conn.execute("DELETE FROM handoff_presence WHERE name = ?", (name,))
