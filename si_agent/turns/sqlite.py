"""``SQLiteTurnStore``: the turn-event record as an append-only table in its own SQLite file.

The file (``Settings.turns_db``, default ``data/turns.db``) sits next to the audit log's,
with the same connections per thread in WAL mode; rows leave only through ``purge``.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

from si_agent.errors import StoreUnavailable
from si_agent.sqlite_connections import ThreadConnections
from si_agent.turns.model import TurnRecord
from si_agent.turns.store import dump, load

_CHUNK = 500  # ids per IN (...) query: under SQLite's variable limit
_SCHEMA = """
CREATE TABLE IF NOT EXISTS turns (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    at           REAL NOT NULL,
    kind         TEXT NOT NULL,
    conversation TEXT NOT NULL,
    data         TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS turns_at ON turns (at);
CREATE INDEX IF NOT EXISTS turns_conversation ON turns (conversation, id);
CREATE TRIGGER IF NOT EXISTS turns_append_only BEFORE UPDATE ON turns
BEGIN
    SELECT RAISE(ABORT, 'the turn-event record is append-only');
END;
"""


class SQLiteTurnStore:
    """Turn records in the SQLite file at ``path`` (its directory is created)."""

    name = "sqlite"

    def __init__(self, path: str | os.PathLike[str], *, timeout: float = 5.0) -> None:
        self.path = Path(path)
        self._connections = ThreadConnections(self.path, timeout)
        self._connections.create(_SCHEMA, "turn store", private=True)

    def __repr__(self) -> str:
        return f"SQLiteTurnStore({str(self.path)!r})"

    def _run(self, sql: str, args: tuple = ()) -> list:
        try:
            return self._connections.get().execute(sql, args).fetchall()
        except sqlite3.Error as exc:
            raise StoreUnavailable(f"SQLite turn store at {self.path}: {exc}") from exc

    def append(self, record: TurnRecord) -> None:
        self._run("INSERT INTO turns (at, kind, conversation, data) VALUES (?, ?, ?, ?)",
                  (record.at.timestamp(), record.kind, record.conversation, dump(record)))

    def conversation(self, conversation: str) -> list[TurnRecord]:
        rows = self._run("SELECT id, data FROM turns WHERE conversation = ? ORDER BY id",
                         (conversation,))
        return [load(data, str(row_id)) for row_id, data in rows]

    def conversations(self, ids: Sequence[str]) -> dict[str, list[TurnRecord]]:
        found: dict[str, list[TurnRecord]] = {i: [] for i in ids}
        for start in range(0, len(ids), _CHUNK):
            chunk = list(ids[start:start + _CHUNK])
            rows = self._run(
                f"SELECT id, conversation, data FROM turns WHERE conversation IN "
                f"({','.join('?' * len(chunk))}) ORDER BY id", tuple(chunk))
            for row_id, conversation, data in rows:
                found[conversation].append(load(data, str(row_id)))
        return found

    def recent(self, since: datetime | None = None, limit: int = 100) -> list[str]:
        rows = self._run(
            "SELECT conversation, MAX(id) AS last FROM turns WHERE at >= ? "
            "GROUP BY conversation ORDER BY last DESC LIMIT ?",
            (since.timestamp() if since is not None else float("-inf"), limit))
        return [conversation for conversation, _ in rows]

    def purge(self, before: datetime) -> None:
        self._run("DELETE FROM turns WHERE at < ?", (before.timestamp(),))
