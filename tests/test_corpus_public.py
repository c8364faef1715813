"""Replays tests/corpus_public (real citizens' questions from public pages, each with its
page address) through the controller with the rule engine and the shipped knowledge base.

The scoring is ``run_public`` of scripts/bench_rag.py (the benchmark prints the same
table per topic). Items are never edited to fit the engine.

Issue 25's target is 85% handled well and no unrelated passage; it is not reached yet
(34.3% and 22 at the first pass, 49.2% and 10 now). These tests hold what was reached,
so that a change that loses ground fails; raise the floors as the answers improve.

tests/corpus_public_holdout is a second public corpus (79 questions, no page in common),
gathered later without reading the engine or the knowledge base and never used to tune
them: 60.8% handled well before this stop's changes (6a3c501), 62.0% after.
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
HOLDOUT = ROOT / "tests" / "corpus_public_holdout" / "questions.yaml"
# (corpus, least items, handled well floor, unrelated passages ceiling); the issue's
# targets are 0.85 and 0.
CORPORA = {"corpus_public": (CORPUS, 200, 0.49, 10),
           "corpus_public_holdout": (HOLDOUT, 75, 0.60, 3)}
KINDS = {"question", "request", "value_midflow", "other"}


def _bench():
    spec = importlib.util.spec_from_file_location("bench_rag", ROOT / "scripts" / "bench_rag.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("name", CORPORA)
def test_corpus_shape(name):
    path, least, _, _ = CORPORA[name]
    items = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert len(items) >= least
    if path == HOLDOUT:  # one item a page (the first corpus has several from some pages)
        assert len({i["url"] for i in items}) == len(items)
    catalog = load_businesses(ROOT / "businesses")
    for item in items:
        assert item["q"].strip() and item["url"].startswith("http"), item
        assert item["kind"] in KINDS, item
        assert item["expected_business"] in (None, *catalog), item
        for group in item["key_facts"]:
            assert group and all(isinstance(alt, str) and alt for alt in group), item


def test_holdout_shares_no_page():
    urls = {i["url"] for i in yaml.safe_load(CORPUS.read_text(encoding="utf-8"))}
    assert not urls & {i["url"] for i in yaml.safe_load(HOLDOUT.read_text(encoding="utf-8"))}


@pytest.fixture(scope="module", params=list(CORPORA))
def scored(request, tmp_path_factory):
    bench = _bench()
    settings = Settings(business_dir=ROOT / "businesses", kb_dir=ROOT / "rag" / "knowledge",
                        data_dir=tmp_path_factory.mktemp("corpus-public"))
    catalog = load_businesses(settings.business_dir)
    knowledge = create_knowledge(settings, catalog)
    controller = Controller(catalog, MemoryStore(), create_engine("rules", catalog, settings),
                            Executors(settings), knowledge=knowledge)
    path, _, floor, ceiling = CORPORA[request.param]
    bench.SETS["public"] = path
    rows, misses = bench.run_public(controller, knowledge, bench.load_set("public"))
    table = {row[0]: dict(zip(bench.PUBLIC_HEAD, row, strict=True)) for row in rows}
    return table, misses, floor, ceiling


def test_handled_well(scored):
    table, misses, floor, _ = scored
    assert table["all"]["handled well"] >= floor, misses["not handled well"]


def test_unrelated_passages_do_not_grow(scored):
    table, misses, _, ceiling = scored
    assert table["all"]["unrelated passages"] <= ceiling, misses["unrelated passage"]
