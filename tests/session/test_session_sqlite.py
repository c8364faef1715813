"""SQLiteStore specifics: file handling, WAL, purging, several instances on one file."""

from __future__ import annotations

import sqlite3
import stat
import threading

import pytest

from si_agent.errors import SessionConflict, StoreUnavailable
from si_agent.session import SQLiteStore
from si_agent.session.model import Session


def test_creates_parent_directory_private_file_and_wal(tmp_path):
    path = tmp_path / "a" / "b" / "sessions.db"
    SQLiteStore(path)
    assert path.is_file()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        columns = [row[1] for row in conn.execute("PRAGMA table_info(sessions)")]
    assert columns == ["session_id", "version", "data", "updated_at"]


def test_in_memory_database_is_refused():
    with pytest.raises(ValueError, match="MemoryStore"):
        SQLiteStore(":memory:")


def test_invalid_ttl_is_refused(tmp_path):
    with pytest.raises(ValueError, match="ttl"):
        SQLiteStore(tmp_path / "s.db", ttl=0)


def test_unusable_path_raises_store_unavailable(tmp_path):
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("x")
    with pytest.raises(StoreUnavailable, match="not-a-dir"):
        SQLiteStore(blocker / "sessions.db")


def test_ping_false_when_the_database_is_unreadable(tmp_path):
    path = tmp_path / "s.db"
    store = SQLiteStore(path)
    assert store.ping() is True
    store.close()
    for suffix in ("", "-wal", "-shm"):
        (tmp_path / f"s.db{suffix}").unlink(missing_ok=True)
    path.write_bytes(b"this is not a database" * 100)
    assert store.ping() is False
    with pytest.raises(StoreUnavailable, match="load"):
        store.load("x")


def test_purge_removes_only_expired_rows(tmp_path):
    store = SQLiteStore(tmp_path / "s.db", ttl=60)
    for sid in ("old-1", "old-2", "fresh"):
        store.save(Session(session_id=sid))
    with sqlite3.connect(store.path) as conn:
        conn.execute("UPDATE sessions SET updated_at = 0 WHERE session_id LIKE 'old-%'")
    assert store.load("old-1") is None
    assert store.purge_expired() == 2
    with sqlite3.connect(store.path) as conn:
        left = [row[0] for row in conn.execute("SELECT session_id FROM sessions")]
    assert left == ["fresh"]


def test_two_instances_on_one_file_share_sessions_and_versions(tmp_path):
    first = SQLiteStore(tmp_path / "s.db")
    second = SQLiteStore(tmp_path / "s.db")
    session = Session(session_id="s1")
    first.save(session)
    other = second.load("s1")
    assert other is not None and other.version == 1
    second.save(other)
    with pytest.raises(SessionConflict):
        first.save(session)


def test_each_thread_gets_its_own_connection(tmp_path):
    store = SQLiteStore(tmp_path / "s.db")
    store.save(Session(session_id="s1"))
    seen: list[object] = []

    def work() -> None:
        assert store.load("s1") is not None
        seen.append(store._connection())

    threads = [threading.Thread(target=work) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len({id(c) for c in seen}) == 3
    assert store._connection() not in seen
