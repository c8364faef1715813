"""SQLite storage of the demo portal: drafts, applications, injected faults, login epoch.

Every call opens its own connection, so the threaded dev server and several
processes can share one file; writes that must be atomic (submitting a draft,
taking a fault) hold SQLite's write lock (``BEGIN IMMEDIATE``) while they run.
The login epoch is a number a session must carry to stay valid: bumping it
logs everybody out. A draft may carry a form variant's seed and a field to
refuse once (``variants``).

Every change to a draft is a compare-and-set on its ``rev`` (the page token the
form carries), so a POST read from a stale snapshot (held by the network, or
from a page shown before another window moved on) changes nothing. A draft also
keeps the highest ``attempt`` (fencing token) a POST carried: a POST of an older
attempt is refused, so a killed worker's late request cannot undo its
successor's work.
"""

from __future__ import annotations

import json
import secrets
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from si_agent.demo_backend import clock
from si_agent.demo_backend.db import transaction

BUSY_TIMEOUT_SECONDS = 10.0

SCHEMA = """
CREATE TABLE IF NOT EXISTS drafts (
    draft_id       TEXT PRIMARY KEY,
    business_id    TEXT NOT NULL,
    version        INTEGER NOT NULL,
    page           INTEGER NOT NULL DEFAULT 0,   -- index of the page shown
    raw            TEXT NOT NULL DEFAULT '{}',   -- posted values by control id (JSON)
    application_no TEXT,                         -- set once submitted
    created_at     TEXT NOT NULL,
    variant        INTEGER,                      -- the form variant's seed, if any
    inject         TEXT,                         -- business key to refuse once, until used
    rev            INTEGER NOT NULL DEFAULT 0,   -- +1 on every change: the page token
    attempt        INTEGER NOT NULL DEFAULT 0,   -- highest fencing token posted
    posts          INTEGER NOT NULL DEFAULT 0,   -- POSTs that arrived (for held faults)
    held           INTEGER NOT NULL DEFAULT 0    -- POSTs held until the next one arrives
);
CREATE TABLE IF NOT EXISTS applications (
    seq            INTEGER PRIMARY KEY AUTOINCREMENT,
    application_no TEXT NOT NULL UNIQUE,
    business_id    TEXT NOT NULL,
    draft_id       TEXT NOT NULL UNIQUE,
    vals           TEXT NOT NULL,                -- stored values by business key (JSON)
    created_at     TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS serials (
    day  TEXT PRIMARY KEY,                       -- YYYYMMDD
    last INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS faults (
    id        INTEGER PRIMARY KEY CHECK (id = 1),
    remaining INTEGER NOT NULL,
    status    INTEGER,                           -- NULL: only slow down
    delay     REAL NOT NULL,
    after     INTEGER NOT NULL,                  -- 1: fail after the POST took effect
    until_next_post INTEGER NOT NULL DEFAULT 0   -- 1: held until the draft's next POST
);
CREATE TABLE IF NOT EXISTS meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
"""


@dataclass(frozen=True)
class Draft:
    draft_id: str
    business_id: str
    version: int
    page: int
    raw: dict[str, str]
    application_no: str | None
    variant: int | None = None
    inject: str | None = None
    rev: int = 0
    attempt: int = 0


@dataclass(frozen=True)
class Fault:
    """One injected fault for one form POST: wait ``delay`` s (or, with
    ``until_next_post``, until the draft's next POST arrives, at most ``delay`` s),
    then answer ``status``."""

    status: int | None
    delay: float
    after: bool
    until_next_post: bool = False


class PortalStore:
    """The portal's data in one SQLite file (created on first use)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._connect() as conn:
            conn.execute("PRAGMA journal_mode = WAL")
            conn.executescript(SCHEMA)
            # A database made before drafts had variants, tokens and held faults.
            number = "INTEGER NOT NULL DEFAULT 0"
            for table, column, kind in (
                    ("drafts", "variant", "INTEGER"), ("drafts", "inject", "TEXT"),
                    ("drafts", "rev", number), ("drafts", "attempt", number),
                    ("drafts", "posts", number), ("drafts", "held", number),
                    ("faults", "until_next_post", number)):
                have = {row["name"] for row in conn.execute(f"PRAGMA table_info({table})")}
                if column not in have:
                    conn.execute(f"ALTER TABLE {table} ADD COLUMN {column} {kind}")

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_SECONDS, isolation_level=None)
        conn.row_factory = sqlite3.Row
        try:
            yield conn
        finally:
            conn.close()

    # -- drafts ---------------------------------------------------------------------

    def create_draft(self, business_id: str, version: int, *, variant: int | None = None,
                     inject: str | None = None) -> str:
        draft_id = secrets.token_hex(8)
        with self._connect() as conn:
            conn.execute("INSERT INTO drafts (draft_id, business_id, version, created_at,"
                         " variant, inject) VALUES (?, ?, ?, ?, ?, ?)",
                         (draft_id, business_id, version, clock.now().isoformat(), variant,
                          inject))
        return draft_id

    def draft(self, draft_id: str) -> Draft | None:
        with self._connect() as conn:
            row = conn.execute("SELECT * FROM drafts WHERE draft_id = ?", (draft_id,)).fetchone()
        if row is None:
            return None
        return Draft(row["draft_id"], row["business_id"], row["version"], row["page"],
                     json.loads(row["raw"]), row["application_no"], row["variant"],
                     row["inject"], row["rev"], row["attempt"])

    def count_post(self, draft_id: str, *, posts: int = 0, held: int = 0) -> tuple[int, int]:
        """Add to the draft's counts of POSTs arrived and POSTs held; both, after."""
        with self._connect() as conn:
            rows = conn.execute("UPDATE drafts SET posts = posts + ?, held = held + ?"
                                " WHERE draft_id = ? RETURNING posts, held",
                                (posts, held, draft_id)).fetchall()
        return (rows[0]["posts"], rows[0]["held"]) if rows else (0, 0)

    def take_injection(self, draft_id: str) -> bool:
        """Use up the draft's injected refusal; False when it was used already."""
        with self._connect() as conn:
            rows = conn.execute("UPDATE drafts SET inject = NULL WHERE draft_id = ?"
                                " AND inject IS NOT NULL RETURNING draft_id",
                                (draft_id,)).fetchall()
        return bool(rows)

    def save_draft(self, draft: Draft, *, page: int, raw: dict[str, str],
                   attempt: int | None = None) -> bool:
        """Move the draft read as ``draft`` to ``page`` with ``raw``, only if nothing
        changed it since (same ``rev``), it is not submitted, and ``attempt`` (when
        given) is not older than the newest one posted. False: it was stale."""
        with self._connect() as conn:
            rows = conn.execute(
                "UPDATE drafts SET page = ?, raw = ?, rev = rev + 1,"
                " attempt = MAX(attempt, ?) WHERE draft_id = ? AND rev = ? AND attempt <= ?"
                " AND application_no IS NULL RETURNING rev",
                (page, json.dumps(raw, ensure_ascii=False), attempt or 0, draft.draft_id,
                 draft.rev, attempt if attempt is not None else draft.attempt)).fetchall()
        return bool(rows)

    def submit(self, draft: Draft, values: dict[str, Any], *, raw: dict[str, str] | None = None,
               attempt: int | None = None) -> str | None:
        """Turn the draft into an application once; return its number (the old one if
        it was submitted already), or None when ``draft`` is stale (another POST
        changed it since it was read, or a newer attempt posted)."""
        with self._connect() as conn, transaction(conn):
            row = conn.execute("SELECT application_no, rev, attempt FROM drafts"
                               " WHERE draft_id = ?", (draft.draft_id,)).fetchone()
            if row["application_no"]:
                return row["application_no"]
            fence = attempt if attempt is not None else draft.attempt
            if row["rev"] != draft.rev or row["attempt"] > fence:
                return None
            number = self._next_number(conn)
            conn.execute("INSERT INTO applications (application_no, business_id, draft_id, vals,"
                         " created_at) VALUES (?, ?, ?, ?, ?)",
                         (number, draft.business_id, draft.draft_id,
                          json.dumps(values, ensure_ascii=False), clock.now().isoformat()))
            conn.execute("UPDATE drafts SET application_no = ?, raw = ?, rev = rev + 1,"
                         " attempt = MAX(attempt, ?) WHERE draft_id = ?",
                         (number, json.dumps(draft.raw if raw is None else raw,
                                             ensure_ascii=False),
                          attempt or 0, draft.draft_id))
        return number

    @staticmethod
    def _next_number(conn: sqlite3.Connection) -> str:
        day = clock.today().strftime("%Y%m%d")
        last = conn.execute("INSERT INTO serials (day, last) VALUES (?, 1) ON CONFLICT (day)"
                            " DO UPDATE SET last = last + 1 RETURNING last", (day,)).fetchall()
        return f"SI{day}{last[0]['last']:06d}"

    def applications(self) -> list[dict[str, Any]]:
        """Every application, newest first."""
        with self._connect() as conn:
            rows = conn.execute("SELECT * FROM applications ORDER BY seq DESC").fetchall()
        return [{"application_no": r["application_no"], "business_id": r["business_id"],
                 "draft_id": r["draft_id"], "values": json.loads(r["vals"])} for r in rows]

    def reset(self) -> None:
        """Forget every draft, application, serial and pending fault."""
        with self._connect() as conn, transaction(conn):
            for table in ("drafts", "applications", "serials", "faults"):
                conn.execute(f"DELETE FROM {table}")

    # -- faults -----------------------------------------------------------------------

    def set_faults(self, count: int, *, status: int | None, delay: float, after: bool,
                   until_next_post: bool = False) -> None:
        with self._connect() as conn:
            conn.execute("INSERT INTO faults (id, remaining, status, delay, after,"
                         " until_next_post) VALUES (1, ?, ?, ?, ?, ?) ON CONFLICT (id) DO"
                         " UPDATE SET remaining = excluded.remaining, status = excluded.status,"
                         " delay = excluded.delay, after = excluded.after,"
                         " until_next_post = excluded.until_next_post",
                         (count, status, delay, int(after), int(until_next_post)))

    def take_fault(self) -> Fault | None:
        """Consume one pending fault, or None when none is pending."""
        with self._connect() as conn:
            # fetchall: the statement must run to completion to release its lock.
            rows = conn.execute("UPDATE faults SET remaining = remaining - 1"
                                " WHERE id = 1 AND remaining > 0"
                                " RETURNING status, delay, after, until_next_post").fetchall()
        if not rows:
            return None
        return Fault(rows[0]["status"], rows[0]["delay"], bool(rows[0]["after"]),
                     bool(rows[0]["until_next_post"]))

    # -- logins -----------------------------------------------------------------------

    def login_epoch(self) -> int:
        with self._connect() as conn:
            row = conn.execute("SELECT value FROM meta WHERE key = 'login_epoch'").fetchone()
        return int(row["value"]) if row else 0

    def expire_logins(self) -> None:
        with self._connect() as conn:
            conn.execute("INSERT INTO meta (key, value) VALUES ('login_epoch', '1')"
                         " ON CONFLICT (key) DO UPDATE SET value = CAST(value AS INTEGER) + 1")
