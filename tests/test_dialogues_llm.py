"""Model-mode replays: the real openai client against a fake OpenAI-compatible server.

Each transcript under tests/dialogues_llm names its engine (``llm`` or
``hybrid``) and scripts the model's answers per turn. After the corpus, the
recorded requests are checked: each state offered exactly its toolset, and no
raw ID number, phone or bank card ever left for the model.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from si_agent.cli import demo_backend_hook
from si_agent.config.loader import load_businesses
from si_agent.config.settings import Settings
from si_agent.core import actions as A
from si_agent.engine.prompts import STATE_NAMES
from si_agent.engine.registry import create_engine
from si_agent.executor import Executors
from si_agent.flow.controller import Controller
from si_agent.replay import load_dialogues, replay
from si_agent.session import MemoryStore
from si_agent.testing import FakeOpenAI, fake_step_handlers

ROOT = Path(__file__).resolve().parents[1]
DIALOGUES = load_dialogues([ROOT / "tests" / "dialogues_llm"])
TOOLSETS = {
    "空闲（尚未开始办理业务）": {"match_business", "cancel_flow", "answer_question", "small_talk"},
    "已完成上一项业务": {"match_business", "cancel_flow", "answer_question", "small_talk"},
    "信息收集中": {"provide_field", "modify_info", "explain_field", "switch_business",
                 "cancel_flow", "answer_question", "small_talk"},
    "等待用户确认提交": {"confirm_submit", "cancel_flow", "modify_info", "explain_field",
                   "switch_business", "answer_question", "small_talk"},
    "提交失败，等待重试或修改": {"retry_submit", "modify_info", "cancel_flow", "answer_question",
                      "small_talk"},
}


@pytest.fixture(scope="module")
def fake():
    server = FakeOpenAI()
    server.base_url = server.start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def settings(fake, tmp_path_factory) -> Settings:
    return Settings(business_dir=ROOT / "businesses",
                    data_dir=tmp_path_factory.mktemp("llm-dialogues"),
                    llm_base_url=fake.base_url, llm_api_key="test-key", llm_timeout=1.0,
                    llm_max_retries=1)  # the transcripts script one retry


@pytest.fixture(scope="module")
def catalog(settings):
    return load_businesses(settings.business_dir)


@pytest.fixture(scope="module")
def controllers(settings, catalog):
    executors = Executors(settings)
    return {
        name: Controller(catalog, MemoryStore(), create_engine(name, catalog, settings), executors,
                         step_handlers=fake_step_handlers())
        for name in ("llm", "hybrid")
    }


def test_corpus_size():
    assert len(DIALOGUES) >= 25
    assert {d.get("engine") for _, d in DIALOGUES} == {"llm", "hybrid"}


@pytest.mark.parametrize("source,transcript", DIALOGUES,
                         ids=[Path(s).name for s, _ in DIALOGUES])
def test_model_dialogue(controllers, settings, fake, source, transcript):
    controller = controllers[transcript["engine"]]
    report = replay(controller, transcript, source=source,
                    backend=demo_backend_hook(settings), model=fake)
    if report.skipped:
        pytest.skip(report.skipped)
    assert report.passed, "\n".join(report.failures)


def test_recorded_requests_offer_each_state_its_tools_and_no_personal_data(fake, catalog):
    """Runs after the corpus (same module): every request the model ever saw."""
    assert len(fake.requests) >= 25
    checked = 0
    for body in fake.requests:
        text = json.dumps(body, ensure_ascii=False)
        assert not re.search(r"(?<!\d)\d{11,}(?!\d)", text), "a long number reached the model"
        assert body.get("temperature") == 0.3
        system = body["messages"][0]["content"]
        state = re.search(r"当前状态：(.+)", system)
        if state is None:  # a per-field extraction call
            continue
        offered = {t["function"]["name"] for t in body.get("tools", [])}
        if state.group(1) in TOOLSETS:
            # A business with steps (card_apply's optional photo, never uploaded in these
            # transcripts) or a consultation (skip_field) adds what the action table
            # derives for it.
            business = re.search(r"当前业务：.*（([a-z_]+)）", system)
            expected = TOOLSETS[state.group(1)]
            if business is not None and (catalog[business.group(1)].steps
                                         or catalog[business.group(1)].is_consult):
                b = catalog[business.group(1)]
                name = next(k for k, v in STATE_NAMES.items() if v == state.group(1))
                optional = next((st for st in b.steps if st.optional), None)
                expected = A.tool_names(A.toolset(name, b, optional, catalog))
            assert offered == expected, state.group(1)
            assert body["tool_choice"] == "auto"
            checked += 1
        assert len([m for m in body["messages"] if m["role"] != "system"]) <= 13
    assert checked >= 20
