"""Fixtures for controller tests: the real businesses, rule engine and demo backend."""

from __future__ import annotations

from pathlib import Path

import pytest

from si_agent.config.loader import load_businesses
from si_agent.config.settings import Settings
from si_agent.engine.rules import RuleEngine
from si_agent.executor import Executors
from si_agent.flow.controller import Controller
from si_agent.session import MemoryStore

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def catalog():
    return load_businesses(ROOT / "businesses")


@pytest.fixture
def settings(tmp_path) -> Settings:
    return Settings(business_dir=ROOT / "businesses", data_dir=tmp_path)


@pytest.fixture
def make_controller(catalog, settings):
    executors = Executors(settings)

    def make(store=None, engine=None, **kw) -> Controller:
        return Controller(catalog, store or MemoryStore(), engine or RuleEngine(catalog),
                          executors, **kw)

    yield make
    executors.close()


@pytest.fixture
def controller(make_controller) -> Controller:
    return make_controller()
