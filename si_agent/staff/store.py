"""``StaffStore``: the SQLite file of the staff accounts and console sessions.

One file (``Settings.staff_db``, default ``data/staff.db``), created owner-only,
in WAL mode, with one connection per thread (``si_agent.sqlite_connections``).
``Accounts`` and ``ConsoleSessions`` share one ``StaffStore``: a second opening of
the same file in one process would lose SQLite's locks on it.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from si_agent.errors import StoreUnavailable
from si_agent.sqlite_connections import ThreadConnections

_SCHEMA = """
CREATE TABLE IF NOT EXISTS accounts (
    name       TEXT PRIMARY KEY,
    role       TEXT NOT NULL,
    hash       TEXT NOT NULL,
    created    REAL NOT NULL,
    last_login REAL
);
CREATE TABLE IF NOT EXISTS console_sessions (
    digest  TEXT PRIMARY KEY,  -- SHA-256 of the cookie's token, never the token
    name    TEXT NOT NULL,
    roles   TEXT NOT NULL,     -- comma-separated
    source  TEXT NOT NULL,     -- local (an account here) or token (the gateway's)
    created REAL NOT NULL,
    expires REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS console_sessions_name ON console_sessions (name);
"""


class StaffStore:
    """The staff SQLite file at ``path`` (its directory is created)."""

    def __init__(self, path: str | os.PathLike[str], *, timeout: float = 5.0) -> None:
        self.path = Path(path)
        self._connections = ThreadConnections(self.path, timeout)
        self._connections.create(_SCHEMA, "staff store", private=True)

    def __repr__(self) -> str:
        return f"StaffStore({str(self.path)!r})"

    @contextmanager
    def connection(self) -> Iterator[sqlite3.Connection]:
        """The calling thread's connection; SQLite errors become ``StoreUnavailable``."""
        try:
            yield self._connections.get()
        except sqlite3.Error as exc:
            raise StoreUnavailable(f"SQLite staff store at {self.path}: {exc}") from exc
