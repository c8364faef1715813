"""Replays the blind corpus of issue 25 (tests/dialogues_blind) with the rule engine and
the shipped knowledge base, as the product runs on its embedded defaults.

The transcripts were written blind, before the engine changes, and are never edited.
Every one must pass except those in ``KNOWN_GAPS`` (strict xfails, with the reason);
``test_pass_rate`` holds the issue's target, and no replay of any corpus may store a
value holding the citizen's correction or negation words.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from si_agent.cli import demo_backend_hook
from si_agent.config.loader import load_businesses
from si_agent.config.settings import Settings
from si_agent.engine.rules import RuleEngine
from si_agent.executor import Executors
from si_agent.flow.controller import Controller
from si_agent.knowledge import create_knowledge
from si_agent.replay import load_dialogues, replay
from si_agent.session import MemoryStore

pytest.importorskip("pymilvus")

ROOT = Path(__file__).resolve().parents[1]
DIALOGUES = load_dialogues([ROOT / "tests" / "dialogues_blind"])
# A second blind corpus, written after the first engine changes: 13/50 before issue 25,
# 31/50 at its first pass, 35/50 after fe519c0; the engine was then tuned on it (47/50),
# so it no longer measures generalisation: the three left expect a how-to question
# ("…咋弄") to start its business, where the engine answers and offers it (答疑优先).
TUNED = load_dialogues([ROOT / "tests" / "dialogues_blind2"])
TUNED_FLOOR = 0.94
# A third, written blind after that tuning: 23/40 on the code before it (6a3c501) and
# 24/40 after the tuning on the second, its first pass: the measure of generalisation.
# Its failures were then fixed where the class was clear (32/40, then 35/40: a typo'd name
# retold after a description, "怎么写成苏州了？我要转的是无锡", "就按一算"); the five left
# expect a how-to question naming a business to start it (see TUNED).
HELD_OUT = load_dialogues([ROOT / "tests" / "dialogues_blind3"])
HELD_OUT_FLOOR = 0.875  # what was reached; the target for blind dialogues: 0.95
# A fourth, written blind from the issue and the YAML only (tests/dialogues_blind4/README.md):
# 18/50 at its first pass on daf6180, 49/50 after its failures were fixed by class (regional
# and Traditional wording, spoken-digit forms, voluntary-quit phrasing, help-first answers).
HELD_OUT_4 = load_dialogues([ROOT / "tests" / "dialogues_blind4"])
HELD_OUT_4_FLOOR = 0.98
# A fifth, written blind (闽南, 客家, 西北, 湘 wording; tests/dialogues_blind5/README.md): 24/50
# at its first pass on 816c68c, 39/50 after its failures were fixed by class (soft cancels and
# services asked in those dialects, a cancel clause beside a how-clause, voluntary quits in
# other words, consultation aliases, a denied clause is no new value, twins are two children).
# Left: four negations (不是靠我 是靠…, 二胎还没要, 最高那档交不起, 不是外派…跟儿子住), a budget
# beside a payment term, "最近三年 到去年为止", 五个零 in a number, 对 as a filler in an ID,
# a bank question the knowledge base does not answer, "先莫提交" (kept at confirming here).
HELD_OUT_5 = load_dialogues([ROOT / "tests" / "dialogues_blind5"])
HELD_OUT_5_FLOOR = 0.78
OTHER_CORPORA = load_dialogues([ROOT / "tests" / d for d in ("dialogues", "dialogues_real",
                                                               "dialogues_consult")])
TARGET = 0.95

# (Empty since "买什么保险好啊", with nothing in the knowledge base to answer it, starts the
# consultation it names instead of "暂时无法回答".)
KNOWN_GAPS: dict[str, str] = {}
# The fourth corpus's, replayed one by one as well (strict xfails, with the reason).
HELD_OUT_4_GAPS = {
    # Turn 1, "俺爸要去外地看病 异地就医备案咋整" at idle, is a how-to question naming the
    # business: answered first and the business offered (答疑优先), as for TUNED's three.
    "question_midflow__medical_insured_city_plus_pay_first.yaml":
        "a how-to question naming a business is answered first and the business offered",
}


def _scorer():
    spec = importlib.util.spec_from_file_location("corpus_score", ROOT / "scripts" / "corpus_score.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def settings(tmp_path_factory) -> Settings:
    return Settings(business_dir=ROOT / "businesses", kb_dir=ROOT / "rag" / "knowledge",
                    data_dir=tmp_path_factory.mktemp("dialogues-blind"))


@pytest.fixture(scope="module")
def controller(settings) -> Controller:
    catalog = load_businesses(settings.business_dir)
    knowledge = create_knowledge(settings, catalog)
    assert knowledge.status()["ok"], knowledge.status()
    return Controller(catalog, MemoryStore(), RuleEngine(catalog), Executors(settings),
                      knowledge=knowledge)


def _marks(source: str, gaps: dict[str, str] = KNOWN_GAPS) -> list:
    reason = gaps.get(Path(source).name)
    return [pytest.mark.xfail(reason=reason, strict=True)] if reason else []


def test_corpus_size_and_classes():
    classes = {Path(s).name.split("__")[0] for s, _ in DIALOGUES}
    assert len(DIALOGUES) >= 120 and len(classes) == 10


@pytest.mark.parametrize(
    "source,transcript",
    [pytest.param(s, d, marks=_marks(s), id=Path(s).name) for s, d in DIALOGUES],
)
def test_blind_dialogue(controller, settings, source, transcript):
    report = replay(controller, transcript, source=source, backend=demo_backend_hook(settings))
    assert report.passed, "\n".join(report.failures)


@pytest.mark.parametrize(
    "source,transcript",
    [pytest.param(s, d, marks=_marks(s, HELD_OUT_4_GAPS), id=Path(s).name) for s, d in HELD_OUT_4],
)
def test_fourth_blind_dialogue(controller, settings, source, transcript):
    report = replay(controller, transcript, source=source, backend=demo_backend_hook(settings))
    assert report.passed, "\n".join(report.failures)


def test_pass_rate_and_no_framed_values(controller, settings):
    framed_values = _scorer().framed_values
    passed, framed = 0, []
    for blind, corpus in ((True, DIALOGUES),
                          (False, TUNED + HELD_OUT + HELD_OUT_4 + HELD_OUT_5 + OTHER_CORPORA)):
        for source, transcript in corpus:
            report = replay(controller, transcript, source=source,
                            backend=demo_backend_hook(settings))
            passed += blind and report.passed
            framed += [(Path(source).name, *v) for v in framed_values(report)]
    assert passed / len(DIALOGUES) >= TARGET, f"{passed}/{len(DIALOGUES)}"
    assert framed == []


@pytest.mark.parametrize(("corpus", "size", "floor"), [(TUNED, 50, TUNED_FLOOR),
                                                      (HELD_OUT, 40, HELD_OUT_FLOOR),
                                                      (HELD_OUT_4, 50, HELD_OUT_4_FLOOR),
                                                      (HELD_OUT_5, 50, HELD_OUT_5_FLOOR)],
                         ids=["dialogues_blind2", "dialogues_blind3", "dialogues_blind4",
                              "dialogues_blind5"])
def test_later_blind_corpora_do_not_lose_ground(controller, settings, corpus, size, floor):
    passed = [replay(controller, transcript, source=source,
                     backend=demo_backend_hook(settings)).passed
              for source, transcript in corpus]
    assert len(corpus) >= size
    assert sum(passed) / len(corpus) >= floor, f"{sum(passed)}/{len(corpus)}"
