"""The transcript runner itself: unknown keys fail (a typo never makes a check
vacuous), files are read with the project's YAML loader, and ``requires:`` /
``settings:`` skip a transcript with the reason where the controller cannot run it."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from si_agent.config.loader import load_businesses
from si_agent.config.settings import Settings
from si_agent.engine.rules import RuleEngine
from si_agent.errors import TranscriptError
from si_agent.executor import Executors
from si_agent.flow.controller import Controller
from si_agent.replay import load_dialogues, replay
from si_agent.session import MemoryStore
from si_agent.testing import fake_step_handlers

ROOT = Path(__file__).resolve().parents[1]
GOOD_TURN = ("  - user: 查养老金\n"
             "    expect: {state: collecting, business: pension_query, awaiting: id_number}\n")


@pytest.fixture(scope="module")
def settings(tmp_path_factory) -> Settings:
    return Settings(business_dir=ROOT / "businesses", data_dir=tmp_path_factory.mktemp("replay"))


@pytest.fixture(scope="module")
def controller(settings) -> Controller:
    catalog = load_businesses(settings.business_dir)
    return Controller(catalog, MemoryStore(), RuleEngine(catalog), Executors(settings))


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "t.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_an_unknown_expect_key_fails_at_load_with_its_line(tmp_path):
    path = write(tmp_path, "name: typo\nturns:\n" + GOOD_TURN
                 + "  - user: 330122196303150178\n    expect:\n      state: collecting\n"
                 "      reply_contain: 请输入\n")
    with pytest.raises(TranscriptError) as failed:
        load_dialogues([path])
    assert str(failed.value).startswith(f"{path}:8: turns[1].expect.reply_contain: "
                                        "unknown expect key 'reply_contain'")
    assert "reply_contains" in str(failed.value)  # the valid keys are listed


@pytest.mark.parametrize("text,where", [
    ("name: x\nturn:\n" + GOOD_TURN, "<root>"),  # no turns list at all
    ("name: x\nturns:\n" + GOOD_TURN + "    exepct: {state: idle}\n", "turns[0].exepct"),
    ("name: x\nrequires: {fotos: false}\nturns:\n" + GOOD_TURN, "requires.fotos"),
    ("name: x\nsettings: {handoff: 12345}\nturns:\n" + GOOD_TURN, "settings.handoff"),
])
def test_every_unknown_key_fails(tmp_path, text, where):
    with pytest.raises(TranscriptError, match=f": {re.escape(where)}: "):
        load_dialogues([write(tmp_path, text)])


def test_a_transcript_given_as_data_is_checked_too(controller):
    report = replay(controller, {"turns": [{"user": "查养老金", "expect": {"stat": "idle"}}]})
    assert not report.passed and "unknown expect key 'stat'" in report.failures[0]


def test_the_project_loader_reads_yaml_1_2_scalars(tmp_path):
    [(_, transcript)] = load_dialogues([write(tmp_path, "name: x\nturns:\n  - user: yes\n"
                                              "    expect: {state: idle}\n")])
    assert transcript["turns"][0]["user"] == "yes"  # not True, as yaml.safe_load reads it
    with pytest.raises(TranscriptError, match="duplicate key 'state'"):
        load_dialogues([write(tmp_path, "name: x\nturns:\n  - user: 你好\n"
                              "    expect: {state: idle, state: done}\n")])


def test_photo_requirements_follow_the_controller(settings, controller):
    [(_, absent)] = load_dialogues([ROOT / "tests/dialogues/pension_certification__not_online.yaml"])
    assert replay(controller, absent).passed  # no photo handlers here
    catalog = load_businesses(settings.business_dir)
    with_photos = Controller(catalog, MemoryStore(), RuleEngine(catalog), Executors(settings),
                             step_handlers=fake_step_handlers())
    report = replay(with_photos, absent)
    assert report.skipped and "without the photo step handlers" in report.skipped
    assert report.turns == 0 and report.passed
    wanting = {**absent, "requires": {"photo": True}}
    assert "needs the photo step handlers" in replay(controller, wanting).skipped


def test_module_and_settings_requirements(controller, settings):
    base = {"turns": [{"user": "查养老金", "expect": {"state": "collecting"}}]}
    assert replay(controller, {**base, "requires": {"modules": {"json": True}}}).passed
    report = replay(controller, {**base, "requires": {"modules": {"no_such_module_x": True}}})
    assert report.skipped == "needs the module no_such_module_x installed"
    declared = {**base, "settings": {"handoff_text": "当地人社服务窗口"}}
    report = replay(controller, declared, settings=settings)
    assert report.skipped == "needs the setting handoff_text='当地人社服务窗口'"
    assert replay(controller, declared, settings=settings.replace(
        handoff_text="当地人社服务窗口")).passed


def test_the_command_skips_with_the_reason_and_builds_the_settings_asked_for(tmp_path):
    needs = write(tmp_path, "name: 不存在的库\nrequires: {modules: {no_such_module_x: true}}\n"
                  "turns:\n" + GOOD_TURN)
    handoff = tmp_path / "handoff.yaml"
    handoff.write_text("name: 转人工\nsettings: {handoff_text: 当地人社服务窗口}\nturns:\n"
                       "  - user: 转人工\n    expect: {state: idle, reply_contains: 当地人社服务窗口}\n",
                       encoding="utf-8")
    env = {**os.environ, "SI_DATA_DIR": str(tmp_path / "data"), "SI_SESSION_STORE": "memory",
           "SI_KNOWLEDGE": "none"}
    out = subprocess.run([sys.executable, "-m", "si_agent.cli", "replay", str(needs), str(handoff)],
                         capture_output=True, text=True, timeout=120, cwd=ROOT, env=env)
    assert out.returncode == 0, out.stdout + out.stderr
    assert f"SKIP {needs}: needs the module no_such_module_x installed" in out.stdout
    assert out.stdout.strip().endswith("1 passed, 0 failed, 1 skipped")
