"""Fixtures for the session store tests.

``backend`` runs a test once per store (memory, sqlite, redis). Redis tests use
db 15 of SI_TEST_REDIS_URL (default redis://127.0.0.1:6379/15) under a unique
key prefix that is deleted afterwards. When Redis does not answer, the redis
tests fail with an explanation, unless SI_SKIP_REDIS=1 makes them skip.
"""

from __future__ import annotations

import dataclasses
import sqlite3
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from si_agent.session import MemoryStore, RedisStore, SessionStore, SQLiteStore


@dataclass
class Backend:
    """One store kind under test: how to build it and how to corrupt a record."""

    name: str
    make: Callable[..., SessionStore]  # make(ttl=1800)
    corrupt: Callable[[SessionStore, str, str], None]  # corrupt(store, session_id, data)
    config: dict[str, Any]  # what another process needs to open the same store


def _corrupt_memory(store: SessionStore, session_id: str, data: str) -> None:
    assert isinstance(store, MemoryStore)
    record = store._records[session_id]
    store._records[session_id] = dataclasses.replace(record, data=data)


def _corrupt_sqlite(store: SessionStore, session_id: str, data: str) -> None:
    assert isinstance(store, SQLiteStore)
    with sqlite3.connect(store.path) as conn:
        changed = conn.execute(
            "UPDATE sessions SET data = ? WHERE session_id = ?", (data, session_id)
        ).rowcount
    assert changed == 1


def _corrupt_redis(store: SessionStore, session_id: str, data: str) -> None:
    assert isinstance(store, RedisStore)
    key = store.prefix + session_id
    assert store._client.exists(key)
    store._client.hset(key, "data", data)


@pytest.fixture(
    params=["memory", "sqlite", pytest.param("redis", marks=pytest.mark.redis)],
)
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    stores: list[SessionStore] = []
    if request.param == "memory":

        def make(ttl: float = 1800) -> SessionStore:
            return MemoryStore(ttl=ttl)

        yield Backend("memory", make, _corrupt_memory, {})
    elif request.param == "sqlite":
        path = tmp_path / "nested" / "sessions.db"

        def make(ttl: float = 1800) -> SessionStore:
            store = SQLiteStore(path, ttl=ttl)
            stores.append(store)
            return store

        yield Backend("sqlite", make, _corrupt_sqlite, {"path": str(path)})
    else:
        url = request.getfixturevalue("redis_url")
        prefix = request.getfixturevalue("redis_prefix")

        def make(ttl: float = 1800) -> SessionStore:
            store = RedisStore(url, prefix=prefix, ttl=ttl)
            stores.append(store)
            return store

        yield Backend("redis", make, _corrupt_redis, {"url": url, "prefix": prefix})
    for store in stores:
        store.close()  # type: ignore[attr-defined]
