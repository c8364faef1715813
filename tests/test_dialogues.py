"""Replays every transcript under tests/dialogues with the rule engine."""

from __future__ import annotations

from pathlib import Path

import pytest

from si_agent.cli import demo_backend_hook
from si_agent.config.loader import load_businesses
from si_agent.config.settings import Settings
from si_agent.engine.rules import RuleEngine
from si_agent.executor import Executors
from si_agent.flow.controller import Controller
from si_agent.replay import load_dialogues, replay
from si_agent.session import MemoryStore
from si_agent.testing import fake_step_handlers

ROOT = Path(__file__).resolve().parents[1]
DIALOGUES = load_dialogues([ROOT / "tests" / "dialogues"])
# Photo-step dialogues, replayed with stand-ins for the OCR and face engines.
STEP_DIALOGUES = load_dialogues([ROOT / "tests" / "dialogues_steps"])
# Guided consultations (type: consult), written blind from the YAML and the issue.
CONSULT_DIALOGUES = load_dialogues([ROOT / "tests" / "dialogues_consult"])


@pytest.fixture(scope="module")
def settings(tmp_path_factory) -> Settings:
    return Settings(business_dir=ROOT / "businesses",
                    data_dir=tmp_path_factory.mktemp("dialogues"))


@pytest.fixture(scope="module")
def controller(settings) -> Controller:
    catalog = load_businesses(settings.business_dir)
    return Controller(catalog, MemoryStore(), RuleEngine(catalog), Executors(settings))


@pytest.fixture(scope="module")
def step_controller(settings) -> Controller:
    catalog = load_businesses(settings.business_dir)
    return Controller(catalog, MemoryStore(), RuleEngine(catalog), Executors(settings),
                      step_handlers=fake_step_handlers())


def test_corpus_covers_every_business(controller):
    started = {
        t["expect"]["business"]
        for _, d in DIALOGUES + STEP_DIALOGUES + CONSULT_DIALOGUES for t in d["turns"]
        if (t.get("expect") or {}).get("business")
    }
    assert len(DIALOGUES) >= 60
    assert started == set(controller.catalog)


@pytest.mark.parametrize("source,transcript", DIALOGUES,
                         ids=[Path(s).name for s, _ in DIALOGUES])
def test_dialogue(controller, settings, source, transcript):
    report = replay(controller, transcript, source=source, backend=demo_backend_hook(settings))
    if report.skipped:
        pytest.skip(report.skipped)
    assert report.passed, "\n".join(report.failures)


@pytest.mark.parametrize("source,transcript", STEP_DIALOGUES,
                         ids=[Path(s).name for s, _ in STEP_DIALOGUES])
def test_step_dialogue(step_controller, settings, source, transcript):
    report = replay(step_controller, transcript, source=source,
                    backend=demo_backend_hook(settings))
    if report.skipped:
        pytest.skip(report.skipped)
    assert report.passed, "\n".join(report.failures)


@pytest.mark.parametrize("source,transcript", CONSULT_DIALOGUES,
                         ids=[Path(s).name for s, _ in CONSULT_DIALOGUES])
def test_consult_dialogue(controller, source, transcript):
    report = replay(controller, transcript, source=source)
    if report.skipped:
        pytest.skip(report.skipped)
    assert report.passed, "\n".join(report.failures)
