"""The real-world corpus in model mode: what every model request carries.

Every transcript of ``tests/dialogues_real`` is replayed with the ``hybrid``
and the ``llm`` engine against the fake OpenAI-compatible server
(``si_agent.testing.FakeOpenAI``), through the real ``openai`` client. The
corpus has no per-turn model script, so the fake model follows one policy:

    it answers what the rule engine decides for the same turn (the rules'
    tool calls, or, when the rules find nothing, a short Chinese text and no
    tool call).

``RulesAsModel`` wraps the engine under test: before each turn it asks a rule
engine for its decision on the same view, message and tools, and the fake
server answers the turn's model request with those calls. The session then
moves through the states much as it does with the rules alone (collecting,
confirming, failed...), so requests are seen in every state the corpus
reaches, with a growing history. The answers carry the rules' raw values (a
real model would get placeholders): harmless, the engine restores
placeholders only, and what is checked is what goes *to* the model.

The transcripts' ``expect`` blocks are not asserted: the corpus scores the
rules (``scripts/corpus_score.py``). Checked instead, per turn: the turn runs
without raising and leaves the session in one of the machine's states; and,
for every request the model receives:

- the tools offered are exactly ``core.actions.toolset`` for the state,
  business, step and retryability the system prompt names;
- no raw personal value reaches the model: no run of 11+ digits, and none of
  the ID numbers, phones, cards or long numbers typed in the corpus, found
  independently of ``si_agent.privacy`` (full-width and Chinese digits and
  digit groups read as digits), anywhere in the body;
- where the user typed such values, the message sent carries placeholders
  (``<ID_1>``, ``<PHONE_1>``, ``<CARD_1>``, ``<NUM_1>``) instead;
- the history sent is bounded (``HISTORY_MESSAGES`` plus the new message).

Both engines are run: ``hybrid`` calls the model only when the rules are not
sure, ``llm`` on every turn, so the second covers every turn of the corpus.
The last test asserts how many requests were checked, so the module cannot
pass on an empty record.
"""

from __future__ import annotations

import json
import logging
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from flask import request

from si_agent.cli import demo_backend_hook
from si_agent.config.loader import load_businesses
from si_agent.config.settings import Settings
from si_agent.core.actions import toolset
from si_agent.core.decision import Decision, SessionView, TextSink
from si_agent.core.machine import STATES
from si_agent.engine.llm import HISTORY_MESSAGES
from si_agent.engine.prompts import STATE_NAMES
from si_agent.engine.registry import create_engine
from si_agent.engine.rules import RuleEngine
from si_agent.executor import Executors
from si_agent.flow.controller import Controller
from si_agent.replay import load_dialogues
from si_agent.session import MemoryStore
from si_agent.testing import FakeOpenAI, fake_step_handlers

ROOT = Path(__file__).resolve().parents[1]
DIALOGUES = load_dialogues([ROOT / "tests" / "dialogues_real"])
ENGINES = ("hybrid", "llm")
NO_DECISION_TEXT = "好的，请您再说具体一点。"

STATE_BY_NAME = {name: state for state, name in STATE_NAMES.items()}
PLACEHOLDER = re.compile(r"<(?:ID|PHONE|CARD|NUM)_\d+>")
LONG_DIGITS = re.compile(r"(?<!\d)\d{11,}(?!\d)")

# Full-width and Chinese digits read as ASCII digits, for finding personal values
# however they were typed (a phone said as 一三八零零一三八零零三).
_DIGITS = str.maketrans({**{chr(0xFF10 + i): str(i) for i in range(10)},
                         **dict(zip("零〇一二三四五六七八九幺", "001234567891", strict=True)),
                         "ｘ": "X", "x": "X"})
_DIGIT_GAPS = re.compile(r"(?<=\d)[\s\-\u3000]+(?=\d)")
_PERSONAL = re.compile(r"(?<!\d)\d{17}X|(?<!\d)\d{11,}(?!\d)")


def as_digits(text: str) -> str:
    """``text`` with every digit ASCII and the gaps inside digit groups closed."""
    return _DIGIT_GAPS.sub("", text.translate(_DIGITS))


def personal_values(text: str) -> set[str]:
    """ID numbers, phones, cards and other 11+ digit numbers in ``text``, as digits."""
    return set(_PERSONAL.findall(as_digits(text)))


PERSONAL = {v for _, d in DIALOGUES for t in d["turns"] for v in personal_values(str(t["user"]))}


class RulesAsModel:
    """The engine under test; before each turn, the rules' decision is noted for the fake."""

    def __init__(self, engine: Any, rules: RuleEngine) -> None:
        self.engine = engine
        self.rules = rules
        self.name = engine.name
        self.expected: Decision | None = None

    def decide(self, view: SessionView, message: str, tools: list[dict],
               on_text: TextSink | None = None) -> Decision:
        self.expected = self.rules.decide(view, message, tools)
        return self.engine.decide(view, message, tools, on_text)

    def answer(self, body: dict) -> dict:
        """The fake model's answer to ``body``: the rules' calls that it offers, or a text."""
        offered = {t["function"]["name"] for t in body.get("tools") or []}
        calls = [{"name": c.name, "arguments": c.arguments}
                 for c in (self.expected.calls if self.expected else []) if c.name in offered]
        return {"tool_calls": calls} if calls else {"content": NO_DECISION_TEXT}


class AnsweringFake(FakeOpenAI):
    """The fake server, answering each request with ``policy(body)`` instead of a script."""

    def __init__(self) -> None:
        super().__init__()
        self.policy = None
        self.app.before_request(self._script_one)

    def _script_one(self) -> None:
        self.push(self.policy(request.get_json(force=True)))


@pytest.fixture(scope="module")
def fake():
    server = AnsweringFake()
    server.base_url = server.start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def settings(fake, tmp_path_factory) -> Settings:
    return Settings(business_dir=ROOT / "businesses",
                    data_dir=tmp_path_factory.mktemp("real-model"),
                    llm_base_url=fake.base_url, llm_api_key="test-key", llm_timeout=5.0,
                    llm_max_retries=0)  # every request is answered; a failure must show


@pytest.fixture(scope="module")
def catalog(settings):
    return load_businesses(settings.business_dir)


@pytest.fixture(scope="module")
def controllers(settings, catalog):
    with Executors(settings) as executors:
        yield {
            name: Controller(catalog, MemoryStore(),
                             RulesAsModel(create_engine(name, catalog, settings),
                                          RuleEngine(catalog)),
                             executors, step_handlers=fake_step_handlers())
            for name in ENGINES
        }


# Read by the last test: requests sent and requests that passed the checks, per
# engine, and the states the checked requests were sent in.
SENT: Counter[str] = Counter()
CHECKED: Counter[str] = Counter()
STATES_SEEN: dict[str, Counter[str]] = {name: Counter() for name in ENGINES}
PLACEHOLDERS_SENT: Counter[str] = Counter()  # requests whose new message needed placeholders


def test_corpus_has_personal_values_to_hide():
    assert len(DIALOGUES) >= 150
    assert len(PERSONAL) >= 15, sorted(PERSONAL)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("source,transcript", DIALOGUES, ids=[Path(s).name for s, _ in DIALOGUES])
def test_every_model_request_is_scoped_and_redacted(controllers, settings, catalog, fake, caplog,
                                                    engine, source, transcript):
    controller = controllers[engine]
    fake.policy = controller.engine.answer
    backend = demo_backend_hook(settings)
    session_id = f"{engine}-{Path(source).stem}"
    for i, turn in enumerate(transcript["turns"], start=1):
        where = f"{Path(source).name} turn {i} ({turn['user']!r})"
        if turn.get("backend"):
            backend(turn["backend"])
        first = len(fake.requests)
        before = controller.load(session_id).state
        result = controller.handle(session_id, str(turn["user"]))
        bodies = fake.requests[first:]
        SENT[engine] += len(bodies)
        stored = controller.store.load(session_id)
        assert result.state in STATES, where
        assert stored is not None and stored.state == result.state, where
        assert result.usage["turn"].model_calls == len(bodies), where
        assert fake.unscripted == 0 and fake.pending == 0, where
        for body in bodies:
            state = check_request(body, str(turn["user"]), catalog, settings, where)
            assert state == before, f"{where}: the prompt names {state}, the session is {before}"
            STATES_SEEN[engine][state] += 1
            CHECKED[engine] += 1
            PLACEHOLDERS_SENT[engine] += bool(personal_values(str(turn["user"])))
    # Nothing went wrong on the way: no warning such as the model being unavailable
    # (the rules deciding instead) or a call proposed outside the toolset.
    problems = [r.getMessage() for r in caplog.records
                if r.levelno >= logging.WARNING and r.name.startswith("si_agent")]
    assert not problems, problems


def check_request(body: dict, typed: str, catalog, settings: Settings, where: str) -> str:
    """Asserts what one request may carry; returns the state it was sent in."""
    messages = body["messages"]
    for part in [*messages, {"role": "tools", "content": body.get("tools")}]:
        digits = as_digits(json.dumps(part["content"], ensure_ascii=False))
        leaked = sorted({v for v in PERSONAL if v in digits}
                        | set(LONG_DIGITS.findall(digits)))
        assert not leaked, (f"{where}: {leaked} reached the model in a {part['role']} "
                            f"message: {part['content']!r}")
    assert body.get("temperature") == settings.llm_temperature, where

    assert messages[-1]["role"] == "user", where
    hidden = personal_values(typed)
    if hidden:
        placeholders = set(PLACEHOLDER.findall(messages[-1]["content"]))
        assert len(placeholders) >= len(hidden), (
            f"{where}: {len(hidden)} personal value(s) typed, placeholders sent: "
            f"{sorted(placeholders)} in {messages[-1]['content']!r}")
    assert len([m for m in messages if m["role"] != "system"]) <= HISTORY_MESSAGES + 1, where

    state, expected = expected_tools(messages[0]["content"], catalog)
    offered = [t["function"]["name"] for t in body.get("tools", [])]
    assert body.get("tools") == expected, (
        f"{where}: offered {offered} in {state}, "
        f"expected {[t['function']['name'] for t in expected]}")
    assert body["tool_choice"] == "auto", where
    return state


def expected_tools(system: str, catalog) -> tuple[str, list[dict]]:
    """The state the system prompt names, and ``core.actions.toolset`` for that state,
    business and the step or retry awaited (JSON-shaped, as the request carries it)."""
    state = re.search(r"^当前状态：(.+)$", system, re.M)
    assert state is not None, f"not a decision request: {system!r}"
    name = STATE_BY_NAME[state.group(1)]
    business_id = re.search(r"^当前业务：.*（(\w+)）$", system, re.M)
    business = catalog[business_id.group(1)] if business_id else None
    awaiting = re.search(r"^正在等待：(.+)$", system, re.M)
    awaited = awaiting.group(1) if awaiting else None
    step = None
    if name == "step_executing" and business is not None:
        step = next(s for s in business.steps if s.id == awaited)
    elif name in ("collecting", "confirming") and business is not None:
        # An optional step is offered alongside (none is uploaded or declined here).
        step = next((s for s in business.steps if s.optional), None)
    tools = toolset(name, business, step, catalog, retryable=awaited == "retry")
    return name, json.loads(json.dumps(tools, ensure_ascii=False))


def test_requests_were_checked(fake):
    """Runs after the corpus (same module): the checks above saw enough requests."""
    turns = sum(len(d["turns"]) for _, d in DIALOGUES)
    assert len(fake.requests) == sum(SENT.values())  # every request came from a checked turn
    assert SENT["llm"] >= turns, SENT  # llm asks the model on every turn
    assert SENT["hybrid"] >= 80, SENT  # hybrid when the rules are not sure: 109 of 388
    assert CHECKED["llm"] >= turns * 9 // 10, CHECKED
    assert CHECKED["hybrid"] >= 70, CHECKED
    assert PLACEHOLDERS_SENT["llm"] >= 100 and PLACEHOLDERS_SENT["hybrid"] >= 10, PLACEHOLDERS_SENT
    # llm asks in every state the corpus reaches; hybrid only where the rules are unsure.
    assert {"idle", "collecting", "confirming", "done"} <= set(STATES_SEEN["llm"]), STATES_SEEN
    assert {"idle", "collecting", "confirming"} <= set(STATES_SEEN["hybrid"]), STATES_SEEN
