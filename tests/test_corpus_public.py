"""Replays tests/corpus_public (real citizens' questions from public pages, each with its
page address) through the controller with the rule engine and the shipped knowledge base.

The scoring is ``run_public`` of scripts/bench_rag.py (the benchmark prints the same
table per topic). Items are never edited to fit the engine.

Issue 25's target is 85% handled well and no unrelated passage; it is not reached yet
(34.3% and 22 at the first pass, 48.4% and 10 now). These tests hold what was reached,
so that a change that loses ground fails; raise the floors as the answers improve.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
import yaml

from si_agent.config.loader import load_businesses
from si_agent.config.settings import Settings
from si_agent.engine.registry import create_engine
from si_agent.executor import Executors
from si_agent.flow.controller import Controller
from si_agent.knowledge import create_knowledge
from si_agent.session import MemoryStore

pytest.importorskip("pymilvus")

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "corpus_public" / "questions.yaml"
HANDLED_WELL_FLOOR = 0.48  # the target: 0.85
UNRELATED_CEILING = 10  # the target: 0
KINDS = {"question", "request", "value_midflow", "other"}


def _bench():
    spec = importlib.util.spec_from_file_location("bench_rag", ROOT / "scripts" / "bench_rag.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_corpus_shape():
    items = yaml.safe_load(CORPUS.read_text(encoding="utf-8"))
    assert len(items) >= 200
    catalog = load_businesses(ROOT / "businesses")
    for item in items:
        assert item["q"].strip() and item["url"].startswith("http"), item
        assert item["kind"] in KINDS, item
        assert item["expected_business"] in (None, *catalog), item
        for group in item["key_facts"]:
            assert group and all(isinstance(alt, str) and alt for alt in group), item


@pytest.fixture(scope="module")
def scored(tmp_path_factory):
    bench = _bench()
    settings = Settings(business_dir=ROOT / "businesses", kb_dir=ROOT / "rag" / "knowledge",
                        data_dir=tmp_path_factory.mktemp("corpus-public"))
    catalog = load_businesses(settings.business_dir)
    knowledge = create_knowledge(settings, catalog)
    controller = Controller(catalog, MemoryStore(), create_engine("rules", catalog, settings),
                            Executors(settings), knowledge=knowledge)
    rows, misses = bench.run_public(controller, knowledge, bench.load_set("public"))
    return {row[0]: dict(zip(bench.PUBLIC_HEAD, row, strict=True)) for row in rows}, misses


def test_handled_well(scored):
    table, misses = scored
    assert table["all"]["handled well"] >= HANDLED_WELL_FLOOR, misses["not handled well"]


def test_unrelated_passages_do_not_grow(scored):
    table, misses = scored
    assert table["all"]["unrelated passages"] <= UNRELATED_CEILING, misses["unrelated passage"]
