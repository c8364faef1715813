"""The state machine definition and its checks."""

from __future__ import annotations

import pytest
from transitions import MachineError

from si_agent.core.machine import (
    INITIAL,
    STATES,
    TRANSITIONS,
    DialogueMachine,
    FlowModel,
    check_definition,
    to_mermaid,
)
from si_agent.errors import InvalidMachine


@pytest.fixture(scope="module")
def machine() -> DialogueMachine:
    return DialogueMachine()


def walk(machine, state, confirm, *triggers, steps=False, fields=False):
    model = FlowModel(state, requires_confirm=confirm, steps_pending=steps,
                      fields_pending=fields)
    for t in triggers:
        machine.fire(model, t)
    return model.state


def test_seven_states_and_idle_initial():
    assert STATES == ("idle", "collecting", "step_executing", "confirming", "executing",
                      "done", "failed")
    assert INITIAL == "idle"


@pytest.mark.parametrize("confirm,expected", [(True, "confirming"), (False, "executing")])
def test_fields_done_routes_on_confirmation(machine, confirm, expected):
    assert walk(machine, "idle", confirm, "begin", "fields_done") == expected
    assert walk(machine, "step_executing", confirm, "steps_done") == expected


def test_steps_come_first_then_the_fields_they_did_not_fill(machine):
    assert walk(machine, "idle", True, "begin", steps=True) == "step_executing"
    assert walk(machine, "done", True, "begin", steps=True) == "step_executing"
    assert walk(machine, "idle", True, "begin") == "collecting"
    assert walk(machine, "step_executing", True, "steps_done", fields=True) == "collecting"
    assert walk(machine, "collecting", True, "fields_done", steps=True) == "step_executing"
    for state in ("collecting", "confirming", "failed"):
        assert walk(machine, state, True, "redo") == "step_executing"


def test_full_paths(machine):
    assert walk(machine, "idle", True, "begin", "fields_done", "confirm", "succeed") == "done"
    assert walk(machine, "confirming", True, "modify") == "collecting"
    assert walk(machine, "executing", True, "fail", "retry", "succeed", "begin") == "collecting"
    assert walk(machine, "failed", True, "fix") == "collecting"


@pytest.mark.parametrize("state", STATES)
def test_cancel_from_every_state(machine, state):
    assert walk(machine, state, True, "cancel") == "idle"


@pytest.mark.parametrize("state,trigger", [
    ("idle", "confirm"), ("collecting", "confirm"), ("done", "retry"),
    ("confirming", "succeed"), ("idle", "fields_done"),
])
def test_disallowed_triggers_raise_and_keep_state(machine, state, trigger):
    model = FlowModel(state, requires_confirm=True)
    with pytest.raises(MachineError):
        machine.fire(model, trigger)
    assert model.state == state


def test_definition_check_finds_unreachable_and_unknown_states():
    check_definition(STATES, INITIAL, TRANSITIONS)
    no_steps = tuple(t for t in TRANSITIONS if t["dest"] != "step_executing")
    with pytest.raises(InvalidMachine, match="unreachable states: step_executing"):
        check_definition(STATES, INITIAL, no_steps)
    with pytest.raises(InvalidMachine, match="unknown condition"):
        check_definition(STATES, INITIAL, (*TRANSITIONS, {"trigger": "x", "source": "idle",
                                                           "dest": "done", "conditions": "y"}))
    with pytest.raises(InvalidMachine, match="unknown state"):
        check_definition(STATES, INITIAL, (*TRANSITIONS, {"trigger": "x", "source": "idle",
                                                           "dest": "nowhere"}))
    with pytest.raises(InvalidMachine, match="initial"):
        check_definition(STATES, "start", TRANSITIONS)


def test_mermaid_lists_every_transition():
    text = to_mermaid()
    assert text.startswith("stateDiagram-v2\n    [*] --> idle\n")
    assert "collecting --> confirming: fields_done [requires_confirm]" in text
    assert "collecting --> executing: fields_done" in text
    assert "step_executing --> collecting: steps_done [fields_pending]" in text
    for state in STATES[1:]:
        assert f"{state} --> idle: cancel" in text
    assert "failed --> executing: retry" in text
