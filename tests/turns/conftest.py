"""Fixtures for the turn-event record: ``store`` runs a test once per backend (memory,
sqlite, redis). Redis tests use SI_TEST_REDIS_URL (default db 15) under a key prefix of
their own, deleted afterwards."""

from __future__ import annotations

from datetime import timedelta

import pytest

from si_agent.turns import MemoryTurnStore, TurnStore
from si_agent.turns.redis import RedisTurnStore
from si_agent.turns.sqlite import SQLiteTurnStore


@pytest.fixture(params=["memory", "sqlite", pytest.param("redis", marks=pytest.mark.redis)])
def store(request, tmp_path) -> TurnStore:
    if request.param == "memory":
        return MemoryTurnStore()
    if request.param == "sqlite":
        return SQLiteTurnStore(tmp_path / "turns.db")
    client = request.getfixturevalue("redis_client")
    prefix = request.getfixturevalue("redis_prefix")
    return RedisTurnStore(client, prefix + "turns:", retention=timedelta(days=90))
