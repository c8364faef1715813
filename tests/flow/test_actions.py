"""The action table: toolsets derived from the machine equal the documented table,
and the rule engine proposes only calls from the toolset it is given."""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from si_agent.core import actions as A
from si_agent.core.machine import STATES
from si_agent.engine.rules import RuleEngine
from si_agent.flow.controller import Controller
from si_agent.replay import load_dialogues, replay
from si_agent.session import MemoryStore

ROOT = Path(__file__).resolve().parents[2]


def documented_table() -> dict[str, list[str]]:
    """The per-state table in ``core.actions``'s docstring: state → tools ([x] = if usable)."""
    text = A.__doc__.split("which gives")[1]
    table: dict[str, list[str]] = {}
    for line in text.splitlines():
        m = re.match(r"\s{4}([a-z_, ]+?)\s{2,}(.+)$", line)
        if m:
            for state in m.group(1).split(", "):
                table[state] = [t.strip() for t in m.group(2).split(",")]
    return table


def expected_tools(doc: list[str], business, step, retryable: bool) -> set[str]:
    usable = {
        "[provide_field]": business is not None and bool(business.fields),
        "[redo_step]": business is not None and bool(business.steps),
        "[retry_submit]": retryable,
        "[explain_field]": business is not None and bool(business.fields),
        "[skip_step]": step is not None and step.optional,
        "[skip_field]": business is not None and business.is_consult,
    }
    out = set()
    for tool in doc:
        if tool == "upload_<step>":
            if step is not None:
                out.add(A.step_tool_name(step))
        elif tool.startswith("["):
            if usable[tool]:
                out.add(tool.strip("[]"))
        else:
            out.add(tool)
    return out


def test_the_docstring_table_covers_every_state():
    assert set(documented_table()) == set(STATES)


@pytest.mark.parametrize("state", STATES)
def test_derived_toolsets_equal_the_documented_table(catalog, state):
    doc = documented_table()[state]
    businesses = [None] if state in ("idle", "done") else list(catalog.values())
    for business in businesses:
        steps = [None]
        if state == "step_executing":
            steps = list(business.steps) or [None]
        elif state in ("collecting", "confirming"):  # an optional step may be offered
            steps += [st for st in business.steps if st.optional]
        for step in steps:
            for retryable in (True, False):
                got = A.tool_names(A.toolset(state, business, step, catalog,
                                             retryable=retryable))
                assert got == expected_tools(doc, business, step, retryable), (
                    state, business and business.id, step and step.id, retryable)


def test_tool_schemas_come_from_the_argument_models(catalog):
    b = catalog["social_transfer"]
    provide = A.toolset("collecting", b, None, catalog)[0]["function"]
    assert provide["name"] == "provide_field"
    assert list(provide["parameters"]["properties"]["values"]["properties"]) == [
        "from_city", "to_city", "id_number", "name"]
    match = A.toolset("idle", None, None, catalog)[0]["function"]
    assert match["parameters"]["properties"]["business_id"]["enum"] == list(catalog)
    assert match["parameters"]["required"] == ["business_id"]
    cert = catalog["pension_certification"]
    redo = next(t["function"] for t in A.toolset("confirming", cert, None, catalog)
                if t["function"]["name"] == "redo_step")
    assert redo["parameters"]["properties"]["step_id"]["enum"] == ["id_card_photo", "face_photo"]
    for tools in (A.toolset(s, b, None, catalog) for s in STATES):
        for tool in tools:
            assert tool["function"]["parameters"]["additionalProperties"] is False


def _problem(action, arguments) -> str:
    with pytest.raises(A.BadArguments) as caught:
        A.parse_arguments(action, arguments)
    return caught.value.problem


def test_arguments_are_validated_by_the_same_models():
    provide = A.BY_NAME["provide_field"]
    assert isinstance(A.parse_arguments(provide, {"values": {"name": "张伟"}}), A.ProvideFieldArgs)
    assert "values" in _problem(provide, {"values": "张伟"})
    assert "values" in _problem(provide, {"values": {}})
    assert _problem(provide, {"values": {"a": "b"}, "extra": 1}).startswith("extra")
    assert A.action_for("upload_face_photo") is A.BY_NAME["upload"]
    assert A.action_for("delete_everything") is None


# -- the rule engine stays inside its toolset -----------------------------------------


class RecordingEngine:
    """Wraps the rule engine and keeps every (view, tools) it was asked about."""

    def __init__(self, rules: RuleEngine) -> None:
        self.rules = rules
        self.name = rules.name
        self.seen: list[tuple] = []

    def decide(self, view, message, tools, on_text=None):
        self.seen.append((view, tools))
        return self.rules.decide(view, message, tools, on_text)


@pytest.fixture(scope="module")
def situations(catalog, tmp_path_factory):
    """Every (view, tools) the corpus reaches, and every message it types."""
    from si_agent.cli import demo_backend_hook
    from si_agent.config.settings import Settings
    from si_agent.executor import Executors
    from si_agent.flow.steps import StepResult

    class Reader:
        def run(self, step, upload, context):
            return StepResult(data={"ok": True})

    settings_ = Settings(business_dir=ROOT / "businesses",
                        data_dir=tmp_path_factory.mktemp("situations"))
    engine = RecordingEngine(RuleEngine(catalog))
    executors = Executors(settings_)
    ctl = Controller(catalog, MemoryStore(), engine, executors,
                     step_handlers={"id_card_ocr": Reader(), "face_match": Reader()})
    # The photo-step transcripts reach step_executing (the stand-in readers above).
    dialogues = load_dialogues([ROOT / "tests" / "dialogues", ROOT / "tests" / "dialogues_steps"])
    messages = []
    for source, transcript in dialogues:
        replay(ctl, transcript, source=source, backend=demo_backend_hook(settings_))
        messages += [str(t["user"]) for t in transcript["turns"]]
    executors.close()
    return engine.seen, messages


def test_the_corpus_reaches_every_waiting_state(situations):
    seen, _ = situations
    assert {view.state for view, _ in seen} >= {"idle", "collecting", "step_executing",
                                               "confirming", "done", "failed"}


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_rules_never_propose_a_call_outside_the_toolset(catalog, situations, data):
    seen, messages = situations
    view, tools = data.draw(st.sampled_from(seen))
    message = data.draw(st.one_of(st.sampled_from(messages), st.text(max_size=30)))
    offered = frozenset(A.tool_names(tools))
    # The rules' own proposals, before decide()'s safety net drops anything.
    calls, rule, _ = RuleEngine(catalog).propose(view, unicodedata.normalize("NFKC", message)
                                                 .strip(), offered)
    started = False
    for call in calls:
        assert call.name in offered or (started and call.name == "provide_field"), (
            view.state, message, call.name, rule)
        started = started or call.name == "match_business"
    decision = RuleEngine(catalog).decide(view, message, tools)
    assert [c.name for c in decision.calls] == [c.name for c in calls]
    assert 0.0 <= decision.confidence <= 1.0
