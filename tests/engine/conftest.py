"""Fixtures for the model engine tests: a fake OpenAI-compatible server and settings for it."""

from __future__ import annotations

from pathlib import Path

import pytest

from si_agent.config.loader import load_businesses
from si_agent.config.settings import Settings
from si_agent.executor import Executors
from si_agent.flow.controller import Controller
from si_agent.session import MemoryStore

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def settings(fake, tmp_path) -> Settings:
    return Settings(business_dir=ROOT / "businesses", knowledge="none", data_dir=tmp_path,
                   session_store="memory", llm_base_url=fake.base_url, llm_timeout=1.0,
                   llm_max_retries=1, rate_limit="1000 per minute")


@pytest.fixture(scope="session")
def catalog():
    return load_businesses(ROOT / "businesses")


def make(catalog, settings, engine) -> Controller:
    """A controller with a memory store around ``engine``."""
    return Controller(catalog, MemoryStore(), engine, Executors(settings))
