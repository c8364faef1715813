"""``SQLiteAuditStore``: the audit log as an append-only table in its own SQLite file.

The file (``Settings.audit_db``, default ``data/audit.db``) is separate from the
sessions' so it outlives them and can be backed up or handed to an auditor on
its own. Connections per thread (and per forked process) in WAL mode, like the
session and job stores; a trigger refuses any ``UPDATE`` of an entry, and rows
leave only through ``purge`` (retention).
"""

from __future__ import annotations

import os
import sqlite3
from datetime import datetime
from pathlib import Path

from si_agent.audit.model import AuditEntry
from si_agent.errors import StoreUnavailable
from si_agent.sqlite_connections import ThreadConnections

_SCHEMA = """
CREATE TABLE IF NOT EXISTS audit (
    id       INTEGER PRIMARY KEY AUTOINCREMENT,
    at       REAL NOT NULL,
    business TEXT NOT NULL,
    data     TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS audit_at ON audit (at);
CREATE INDEX IF NOT EXISTS audit_business ON audit (business, id);  -- newest of a business
CREATE TRIGGER IF NOT EXISTS audit_append_only BEFORE UPDATE ON audit
BEGIN
    SELECT RAISE(ABORT, 'the audit log is append-only');
END;
"""


class SQLiteAuditStore:
    """Audit entries in the SQLite file at ``path`` (its directory is created)."""

    name = "sqlite"

    def __init__(self, path: str | os.PathLike[str], *, timeout: float = 5.0) -> None:
        self.path = Path(path)
        self.timeout = timeout
        self._connections = ThreadConnections(self.path, timeout)
        # Hashed users and masked values only, but still nobody else's business.
        self._connections.create(_SCHEMA, "audit store", private=True)

    def __repr__(self) -> str:
        return f"SQLiteAuditStore({str(self.path)!r})"

    def _connection(self) -> sqlite3.Connection:
        return self._connections.get()

    def append(self, entry: AuditEntry) -> None:
        try:
            self._connection().execute(
                "INSERT INTO audit (at, business, data) VALUES (?, ?, ?)",
                (entry.timestamp, entry.business, entry.model_dump_json(exclude={"id"})))
        except sqlite3.Error as exc:
            raise StoreUnavailable(f"SQLite audit store at {self.path}: {exc}") from exc

    def query(self, business: str | None = None, since: datetime | None = None,
              limit: int = 100) -> list[AuditEntry]:
        where, args = [], []
        if business is not None:
            where.append("business = ?")
            args.append(business)
        if since is not None:
            where.append("at >= ?")
            args.append(since.timestamp())
        sql = "SELECT id, data FROM audit"
        if where:
            sql += " WHERE " + " AND ".join(where)
        try:
            rows = self._connection().execute(sql + " ORDER BY id DESC LIMIT ?",
                                              (*args, limit)).fetchall()
        except sqlite3.Error as exc:
            raise StoreUnavailable(f"SQLite audit store at {self.path}: {exc}") from exc
        return [AuditEntry.model_validate_json(data).model_copy(update={"id": str(row_id)})
                for row_id, data in rows]

    def purge(self, before: datetime) -> None:
        try:
            self._connection().execute("DELETE FROM audit WHERE at < ?", (before.timestamp(),))
        except sqlite3.Error as exc:
            raise StoreUnavailable(f"SQLite audit store at {self.path}: {exc}") from exc
