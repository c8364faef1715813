"""The dialogue's explicit finite-state machine, built on ``transitions``.

States::

    idle ──begin──▶ collecting ──fields_done──▶ confirming ──confirm──▶ executing
      │                 ▲   └────fields_done (no confirm)──────────────────▲ │
      │                 └──────────modify──────── confirming               │ │
      └─begin_steps─▶ step_executing ──steps_done──▶ confirming|executing  │ │
                                                                           │ ▼
                        failed ◀──fail── executing ──succeed──▶ done ──reset──▶ idle
                          │ └──retry──▶ executing
                          └──fix──▶ collecting        cancel: any state ──▶ idle

A turn's lifecycle, driven by ``flow.controller.Controller``:

1. load the session (or a fresh one in ``idle``);
2. the engine decides: it sees a read-only view and the toolset of the current
   state, and returns tool calls; it never mutates the session;
3. the controller applies each call in order, checking it against the toolset
   of the state the machine is in *at that moment*, and fires the machine's
   triggers; field values pass the validators and cross-field checks;
4. the reply is rendered from the business YAML prompts and ``replies``;
5. the history and a decision record are appended and the session is saved
   (optimistically: on a concurrent save the whole turn runs again).

The machine only moves the ``state``; conditions decide between confirming and
executing. The definition is checked when built: a single initial state, every
state reachable from it, and every trigger known.
"""

from __future__ import annotations

from collections import deque
from typing import Any

from transitions import Machine, MachineError

from si_agent.errors import InvalidMachine

STATES: tuple[str, ...] = (
    "idle", "collecting", "step_executing", "confirming", "executing", "done", "failed",
)
INITIAL = "idle"

TRANSITIONS: tuple[dict[str, Any], ...] = (
    {"trigger": "begin", "source": "idle", "dest": "collecting"},
    {"trigger": "begin_steps", "source": "idle", "dest": "step_executing"},
    {"trigger": "fields_done", "source": "collecting", "dest": "confirming",
     "conditions": "requires_confirm"},
    {"trigger": "fields_done", "source": "collecting", "dest": "executing",
     "unless": "requires_confirm"},
    {"trigger": "steps_done", "source": "step_executing", "dest": "confirming",
     "conditions": "requires_confirm"},
    {"trigger": "steps_done", "source": "step_executing", "dest": "executing",
     "unless": "requires_confirm"},
    {"trigger": "confirm", "source": "confirming", "dest": "executing"},
    {"trigger": "modify", "source": "confirming", "dest": "collecting"},
    {"trigger": "succeed", "source": "executing", "dest": "done"},
    {"trigger": "fail", "source": "executing", "dest": "failed"},
    {"trigger": "retry", "source": "failed", "dest": "executing"},
    {"trigger": "fix", "source": "failed", "dest": "collecting"},
    {"trigger": "reset", "source": "done", "dest": "idle"},
    {"trigger": "cancel", "source": "*", "dest": "idle"},
)


class FlowModel:
    """The object the machine moves; wraps the session being worked on.

    ``requires_confirm`` is the condition the machine reads when fields or
    steps are complete.
    """

    def __init__(self, state: str, requires_confirm: bool = False) -> None:
        self.state = state
        self._requires_confirm = requires_confirm

    def requires_confirm(self) -> bool:
        return self._requires_confirm


class DialogueMachine:
    """One shared, checked machine definition that moves ``FlowModel`` objects."""

    def __init__(self) -> None:
        self._machine = Machine(
            model=None,
            states=list(STATES),
            transitions=[dict(t) for t in TRANSITIONS],
            initial=INITIAL,
            auto_transitions=False,
            send_event=False,
        )
        check_definition(STATES, INITIAL, TRANSITIONS)

    def fire(self, model: FlowModel, trigger: str) -> bool:
        """Fire ``trigger`` on ``model``; True if the state changed.

        Raises ``transitions.MachineError`` when the trigger is not allowed
        from the model's state.
        """
        event = self._machine.events.get(trigger)
        if event is None:
            raise MachineError(f"unknown trigger {trigger!r}")
        return bool(event.trigger(model))


def check_definition(
    states: tuple[str, ...], initial: str, transitions: tuple[dict[str, Any], ...]
) -> None:
    """Raise ``InvalidMachine`` unless every state is known and reachable."""
    known = set(states)
    if initial not in known:
        raise InvalidMachine(f"initial state {initial!r} is not a state")
    edges: dict[str, set[str]] = {s: set() for s in states}
    for t in transitions:
        sources = states if t["source"] == "*" else (t["source"],)
        for src in sources:
            if src not in known or t["dest"] not in known:
                raise InvalidMachine(f"transition {t!r} names an unknown state")
            edges[src].add(t["dest"])
    seen, todo = {initial}, deque([initial])
    while todo:
        for nxt in edges[todo.popleft()] - seen:
            seen.add(nxt)
            todo.append(nxt)
    unreachable = sorted(known - seen)
    if unreachable:
        raise InvalidMachine(f"unreachable states: {', '.join(unreachable)}")


def to_mermaid() -> str:
    """The machine as a Mermaid ``stateDiagram-v2``."""
    lines = ["stateDiagram-v2", f"    [*] --> {INITIAL}"]
    for t in TRANSITIONS:
        label = t["trigger"]
        if "conditions" in t:
            label += f" [{t['conditions']}]"
        if "unless" in t:
            label += f" [not {t['unless']}]"
        sources = STATES if t["source"] == "*" else (t["source"],)
        for src in sources:
            if src != t["dest"]:
                lines.append(f"    {src} --> {t['dest']}: {label}")
    return "\n".join(lines) + "\n"
