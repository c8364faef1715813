"""Fixtures for executor tests: a fresh demo database per test, and executors over it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from si_agent.config.settings import Settings
from si_agent.executor import Executors


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(data_dir=tmp_path / "data")


@pytest.fixture
def db_path(settings: Settings) -> Path:
    return settings.demo_backend_db


@pytest.fixture
def executors(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> Iterator[Executors]:
    monkeypatch.delenv("SI_BACKEND_URL", raising=False)
    with Executors(settings) as ex:
        yield ex

