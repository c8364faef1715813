"""Fixtures for the curated answers: a matcher with the shipped term table and the
businesses' words (as the app builds it), and each store kind."""

from __future__ import annotations

from pathlib import Path

import pytest

from rag.query import understanding_for
from si_agent.config.loader import load_businesses
from si_agent.curated import CuratedBook, Matcher
from si_agent.curated.memory import MemoryCuratedStore
from si_agent.knowledge import business_terms

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def catalog():
    return load_businesses(ROOT / "businesses")


@pytest.fixture(scope="session")
def matcher(catalog) -> Matcher:
    return Matcher(understanding_for(ROOT / "rag" / "knowledge", business_terms(catalog)))


@pytest.fixture
def book(matcher, catalog) -> CuratedBook:
    return CuratedBook(MemoryCuratedStore(), matcher, catalog.keys())
