"""Fixtures for the audit log tests.

``store`` runs a test once per audit store (memory, sqlite, redis). Redis tests
use db 15 of SI_TEST_REDIS_URL (default redis://127.0.0.1:6379/15) under a key of
their own, deleted afterwards; they fail when Redis does not answer, unless
SI_SKIP_REDIS=1 makes them skip.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from si_agent.audit import AuditStore, MemoryAuditStore
from si_agent.audit.redis import RedisAuditStore
from si_agent.audit.sqlite import SQLiteAuditStore

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(params=["memory", "sqlite", pytest.param("redis", marks=pytest.mark.redis)])
def store(request, tmp_path) -> AuditStore:
    if request.param == "memory":
        return MemoryAuditStore()
    if request.param == "sqlite":
        return SQLiteAuditStore(tmp_path / "audit.db")
    client = request.getfixturevalue("redis_client")
    prefix = request.getfixturevalue("redis_prefix")
    return RedisAuditStore(client, prefix + "audit", retention=timedelta(days=180))
