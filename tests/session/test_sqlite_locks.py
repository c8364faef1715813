"""SQLite's locks are POSIX locks, which a process loses on a file as soon as it closes
*any* descriptor of it. Stores that share the session file (jobs, the token denylist)
must never open and close it themselves, or another program reading the file (staff
running ``sqlite3 sessions.db``) believes it is the last user, checkpoints and deletes
the write-ahead log under the running server ("file is not a database")."""

from __future__ import annotations

import subprocess
import sys

from si_agent.jobs.sqlite import SQLiteJobStore
from si_agent.session.denylist import SQLiteDenylist
from si_agent.session.model import Session
from si_agent.session.sqlite import SQLiteStore

READ = "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute('select count(*) from sessions').fetchone(); c.close()"


def test_another_program_reading_the_file_leaves_the_servers_log_alone(tmp_path):
    path = tmp_path / "sessions.db"
    store = SQLiteStore(path)
    store.save(Session(session_id="s1"))  # the server's connection is open, in WAL mode
    SQLiteDenylist(path)  # stores opened afterwards on the same file
    SQLiteJobStore(path)
    wal = tmp_path / "sessions.db-wal"
    assert wal.exists()
    subprocess.run([sys.executable, "-c", READ, str(path)], check=True, timeout=60)
    assert wal.exists(), "the reader took the server's file for unused and removed its log"
    store.save(store.load("s1") or Session(session_id="s1"))
    assert store.load("s1") is not None
