"""``SQLiteCuratedStore``: curated answers in a SQLite file of this machine
(``$SI_DATA_DIR/curated.db``: WAL, owner-only, one connection per thread)."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from si_agent.curated.model import CuratedAnswer
from si_agent.errors import StoreUnavailable
from si_agent.sqlite_connections import ThreadConnections

_SCHEMA = """
CREATE TABLE IF NOT EXISTS curated (
    id     TEXT PRIMARY KEY,
    record TEXT NOT NULL,            -- CuratedAnswer as JSON, without the hit count
    hits   INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS curated_history (
    id      TEXT NOT NULL,
    version INTEGER NOT NULL,
    record  TEXT NOT NULL,
    PRIMARY KEY (id, version)
);
CREATE TABLE IF NOT EXISTS curated_revision (
    one      INTEGER PRIMARY KEY CHECK (one = 1),
    revision INTEGER NOT NULL
);
INSERT OR IGNORE INTO curated_revision VALUES (1, 0);
"""


class SQLiteCuratedStore:
    def __init__(self, path: str | os.PathLike[str], *, timeout: float = 5.0) -> None:
        self.path = Path(path)
        self._connections = ThreadConnections(self.path, timeout)
        self._connections.create(_SCHEMA, "curated answer store", private=True)

    def __repr__(self) -> str:
        return f"SQLiteCuratedStore({str(self.path)!r})"

    @contextmanager
    def _db(self) -> Iterator[sqlite3.Connection]:
        try:
            yield self._connections.get()
        except sqlite3.Error as exc:
            raise StoreUnavailable(f"SQLite curated answer store at {self.path}: {exc}") from exc

    def all(self) -> list[CuratedAnswer]:
        with self._db() as db:
            rows = db.execute("SELECT record, hits FROM curated").fetchall()
        return [_load(r, h) for r, h in rows]

    def get(self, answer_id: str) -> CuratedAnswer | None:
        with self._db() as db:
            row = db.execute("SELECT record, hits FROM curated WHERE id = ?",
                             (answer_id,)).fetchone()
        return _load(*row) if row else None

    def write(self, answers: Sequence[CuratedAnswer],
              replaced: Sequence[CuratedAnswer] = ()) -> None:
        with self._db() as db:
            db.execute("BEGIN IMMEDIATE")
            try:
                db.executemany("INSERT OR REPLACE INTO curated_history VALUES (?, ?, ?)",
                               [(a.id, a.version, a.record()) for a in replaced])
                db.executemany(
                    "INSERT INTO curated (id, record) VALUES (?, ?) "
                    "ON CONFLICT (id) DO UPDATE SET record = excluded.record",
                    [(a.id, a.record()) for a in answers])
                db.execute("UPDATE curated_revision SET revision = revision + 1")
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")

    def delete(self, answer_id: str) -> bool:
        with self._db() as db:
            db.execute("BEGIN IMMEDIATE")
            try:
                found = db.execute("DELETE FROM curated WHERE id = ?", (answer_id,)).rowcount
                db.execute("DELETE FROM curated_history WHERE id = ?", (answer_id,))
                db.execute("UPDATE curated_revision SET revision = revision + 1")
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")
        return bool(found)

    def count_hit(self, answer_id: str) -> None:
        with self._db() as db:
            db.execute("UPDATE curated SET hits = hits + 1 WHERE id = ?", (answer_id,))

    def revision(self) -> int:
        with self._db() as db:
            return db.execute("SELECT revision FROM curated_revision").fetchone()[0]

    def history(self, answer_id: str) -> list[CuratedAnswer]:
        with self._db() as db:
            rows = db.execute("SELECT record FROM curated_history WHERE id = ? "
                              "ORDER BY version DESC", (answer_id,)).fetchall()
        return [CuratedAnswer.model_validate_json(r) for (r,) in rows]


def _load(record: str, hits: int) -> CuratedAnswer:
    answer = CuratedAnswer.model_validate_json(record)
    answer.hits = hits
    return answer
