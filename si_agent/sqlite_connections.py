"""One SQLite connection per thread and per process, for the stores that keep a file
(sessions, jobs, the audit log).

A connection is never shared between threads, and one inherited through ``fork`` is
never used (nor closed: that would touch the parent's file handles). Each store puts
its file in WAL mode once when it opens it; every connection runs with
``synchronous=NORMAL``, durable enough with WAL.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
from pathlib import Path

from si_agent.errors import StoreUnavailable


class ThreadConnections:
    """The calling thread's connection to the SQLite file at ``path``."""

    def __init__(self, path: Path, timeout: float) -> None:
        self.path = path
        self.timeout = timeout
        self._local = threading.local()

    def create(self, schema: str, store: str, *, private: bool = False) -> None:
        """Make the file (and its folder) if missing, put it in WAL mode and run ``schema``.

        A ``private`` file is created readable by its owner only (SQLite gives its -wal
        and -shm files the same permissions). Raises ``StoreUnavailable`` naming the
        ``store`` ("session store").
        """
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            if private:
                # Created owner-only, but only if missing: SQLite's locks are POSIX locks,
                # which this process loses on the file when it closes *any* descriptor of
                # it, so a store opened next to another on the same file never opens it
                # itself (a reader elsewhere would then take the file for unused and
                # checkpoint and delete the write-ahead log under us).
                with contextlib.suppress(FileExistsError):
                    os.close(os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
            conn = self.get()
            conn.execute("PRAGMA journal_mode=WAL")
            conn.executescript(schema)
        except (OSError, sqlite3.Error) as exc:
            raise StoreUnavailable(f"cannot open the SQLite {store} at {self.path}: {exc}") \
                from exc

    def get(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None or self._local.pid != os.getpid():
            if conn is not None:
                self._local.inherited = conn  # through fork: kept referenced, unused
            conn = sqlite3.connect(self.path, timeout=self.timeout, isolation_level=None)
            conn.execute("PRAGMA synchronous=NORMAL")
            self._local.conn, self._local.pid = conn, os.getpid()
        return conn

    def close(self) -> None:
        """Close the calling thread's connection (others close when their thread ends)."""
        conn = getattr(self._local, "conn", None)
        if conn is not None and self._local.pid == os.getpid():
            conn.close()
        self._local.conn = None
