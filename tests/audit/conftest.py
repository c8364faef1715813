"""Fixtures for the audit log tests.

``store`` runs a test once per audit store (memory, sqlite, redis). Redis tests
use db 15 of SI_TEST_REDIS_URL (default redis://127.0.0.1:6379/15) under a key of
their own, deleted afterwards; they fail when Redis does not answer, unless
SI_SKIP_REDIS=1 makes them skip.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from si_agent.audit import AuditStore, MemoryAuditStore
from si_agent.audit.redis import RedisAuditStore
from si_agent.audit.sqlite import SQLiteAuditStore
from si_agent.session.redis import redis_reachable

ROOT = Path(__file__).resolve().parents[2]
REDIS_URL = os.environ.get("SI_TEST_REDIS_URL", "redis://127.0.0.1:6379/15")


@pytest.fixture(scope="session")
def redis_url() -> str:
    if not redis_reachable(REDIS_URL, timeout=1.0):
        message = (f"Redis at {REDIS_URL} does not answer PING. Start it (or point "
                   "SI_TEST_REDIS_URL at one), or set SI_SKIP_REDIS=1 to skip the redis tests.")
        if os.environ.get("SI_SKIP_REDIS") == "1":
            pytest.skip(message)
        pytest.fail(message, pytrace=False)
    return REDIS_URL


@pytest.fixture
def redis_client(redis_url: str) -> Iterator[Any]:
    import redis

    client = redis.Redis.from_url(redis_url)
    yield client
    client.close()


@pytest.fixture
def redis_prefix(redis_client: Any) -> Iterator[str]:
    """A key prefix of this test's own; its keys are deleted afterwards."""
    prefix = f"si_agent:test:{uuid.uuid4().hex}:"
    yield prefix
    keys = list(redis_client.scan_iter(match=prefix + "*"))
    if keys:
        redis_client.delete(*keys)


@pytest.fixture(params=["memory", "sqlite", pytest.param("redis", marks=pytest.mark.redis)])
def store(request, tmp_path) -> AuditStore:
    if request.param == "memory":
        return MemoryAuditStore()
    if request.param == "sqlite":
        return SQLiteAuditStore(tmp_path / "audit.db")
    client = request.getfixturevalue("redis_client")
    prefix = request.getfixturevalue("redis_prefix")
    return RedisAuditStore(client, prefix + "audit", retention=timedelta(days=180))
