"""SQLite storage of the demo backend: schema, connections, one-time setup.

Each thread keeps one connection open to the database it last used
(``connection``), opened again after a fork; writes that must be atomic run
inside ``transaction``, which takes SQLite's write lock up front (``BEGIN
IMMEDIATE``) so concurrent requests, even from other threads or processes,
serialise instead of interleaving.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from si_agent.demo_backend.seed import seed

BUSY_TIMEOUT_SECONDS = 10.0

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS persons (
    id_number  TEXT PRIMARY KEY,
    name       TEXT NOT NULL,
    gender     TEXT NOT NULL,
    phone      TEXT NOT NULL,
    city       TEXT NOT NULL,
    bank       TEXT NOT NULL,
    bank_card  TEXT NOT NULL,
    retired_on TEXT
);
CREATE TABLE IF NOT EXISTS pension_payments (
    id_number    TEXT NOT NULL REFERENCES persons (id_number),
    month        TEXT NOT NULL,          -- YYYY-MM
    amount_cents INTEGER NOT NULL,
    paid_on      TEXT NOT NULL,          -- YYYY-MM-DD
    PRIMARY KEY (id_number, month)
);
CREATE TABLE IF NOT EXISTS contributions (
    id_number      TEXT NOT NULL REFERENCES persons (id_number),
    year           INTEGER NOT NULL,
    months         INTEGER NOT NULL,
    base_cents     INTEGER NOT NULL,     -- monthly contribution base
    personal_cents INTEGER NOT NULL,     -- the person's own share for the year
    PRIMARY KEY (id_number, year)
);
CREATE TABLE IF NOT EXISTS applications (
    application_no TEXT PRIMARY KEY,
    business_id    TEXT NOT NULL,
    business_name  TEXT NOT NULL,
    id_number      TEXT,
    status         TEXT NOT NULL,
    detail         TEXT NOT NULL,
    payload        TEXT NOT NULL,        -- the submitted JSON body
    created_at     TEXT NOT NULL,
    updated_at     TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS serials (
    day  TEXT PRIMARY KEY,               -- YYYYMMDD
    last INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS idempotency (
    key         TEXT NOT NULL UNIQUE,
    business_id TEXT NOT NULL,
    response    TEXT NOT NULL,           -- the stored success body (JSON)
    created_at  TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS calls (
    business_id     TEXT NOT NULL,
    idempotency_key TEXT,
    status          INTEGER NOT NULL,
    at              TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS failures (
    id        INTEGER PRIMARY KEY CHECK (id = 1),
    remaining INTEGER NOT NULL,
    status    INTEGER NOT NULL
);
"""

_ready: set[str] = set()
_ready_lock = threading.Lock()


def _connect(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_SECONDS, isolation_level=None)
    conn.row_factory = sqlite3.Row
    conn.execute("PRAGMA foreign_keys = ON")
    # With WAL, a commit is safe from a crashed process without waiting for the
    # disk (only a power cut may lose the last ones), like the sessions and jobs.
    conn.execute("PRAGMA synchronous = NORMAL")
    return conn


@contextmanager
def connection(path: str | Path) -> Iterator[sqlite3.Connection]:
    """This thread's autocommit connection to the initialised demo database at ``path``.

    The connection stays open for the thread's next request: opening one per
    request, and checkpointing the WAL each time the last one closed, took half
    of a call's time. A block that leaves a transaction open has it rolled back.
    """
    conn = _thread_connection(path)
    try:
        yield conn
    finally:
        if conn.in_transaction:
            conn.execute("ROLLBACK")


_local = threading.local()  # this thread's kept connection: ((path as given, pid), connection)


def _thread_connection(path: str | Path) -> sqlite3.Connection:
    """The calling thread's connection to ``path``; one to another file is closed."""
    key = (str(path), os.getpid())
    kept = getattr(_local, "kept", None)
    if kept is not None and kept[0] == key:
        return kept[1]
    if kept is not None:
        if kept[0][1] == os.getpid():
            kept[1].close()
        else:
            # Inherited through fork: never used, and not closed here either (that
            # would touch the parent's file handles); just kept referenced.
            _local.inherited = kept[1]
    conn = _connect(ensure_db(path))
    _local.kept = (key, conn)
    return conn


@contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """Run the block holding the database write lock; roll back on any exception."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        if conn.in_transaction:  # SQLite may already have rolled back (e.g. disk full)
            conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def ensure_db(path: str | Path) -> Path:
    """Create the schema and seed the demo data, once per process per path.

    Safe across processes too: seeding checks a marker inside a write
    transaction, so only the first process inserts the data.
    """
    path = Path(path).resolve()
    key = str(path)
    if key in _ready:
        return path
    with _ready_lock:
        if key in _ready:
            return path
        path.parent.mkdir(parents=True, exist_ok=True)
        conn = _connect(path)
        try:
            conn.execute("PRAGMA journal_mode = WAL")
            conn.executescript(SCHEMA)
            with transaction(conn):
                seeded = conn.execute("SELECT 1 FROM meta WHERE key = 'seeded'").fetchone()
                if not seeded:
                    seed(conn)
                    conn.execute("INSERT INTO meta (key, value) VALUES ('seeded', '1')")
        finally:
            conn.close()
        _ready.add(key)
    return path


def fail_next(db_path: str | Path, count: int, status: int = 503) -> None:
    """Make the next ``count`` business calls on this database answer ``status``.

    The state lives in the database, so it also affects other processes
    serving the same file. ``count=0`` clears it.
    """
    if count < 0:
        raise ValueError(f"count must be >= 0, got {count}")
    if not 400 <= status <= 599:
        raise ValueError(f"status must be an HTTP error status (400-599), got {status}")
    with connection(db_path) as conn:
        conn.execute(
            "INSERT INTO failures (id, remaining, status) VALUES (1, ?, ?)"
            " ON CONFLICT (id) DO UPDATE SET remaining = excluded.remaining,"
            " status = excluded.status",
            (count, status),
        )


def take_failure(conn: sqlite3.Connection) -> int | None:
    """Consume one injected failure; return its status, or None when none is pending."""
    # fetchall, not fetchone: the statement must run to completion to release its lock.
    rows = conn.execute(
        "UPDATE failures SET remaining = remaining - 1 WHERE id = 1 AND remaining > 0"
        " RETURNING status"
    ).fetchall()
    return int(rows[0]["status"]) if rows else None
