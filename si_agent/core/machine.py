"""The dialogue's explicit finite-state machine, built on ``transitions``.

States and triggers (conditions in brackets, tried in order)::

    idle|done ──begin──▶ step_executing [steps_pending] | collecting
    collecting ──fields_done──▶ done [concludes] | step_executing [steps_pending]
                                | confirming [requires_confirm] | executing
    step_executing ──steps_done──▶ collecting [fields_pending] | confirming [requires_confirm]
                                   | executing
    collecting|step_executing|confirming ──suspend──▶ idle   (put aside for another business)
    collecting|confirming ──modify──▶ collecting       (go back to a field)
    collecting|confirming|failed ──redo──▶ step_executing   (do a step again)
    confirming ──confirm──▶ executing ──succeed──▶ done
                               └──fail──▶ failed ──retry──▶ executing
                                            ├──fix──▶ collecting
                                            └──redo──▶ step_executing
    any state ──cancel──▶ idle

A business may have steps (uploads run by step handlers), fields (typed
values), or both; steps come first, then the fields they did not fill. A
consultation (``type: consult``) concludes: once its slots are in, it is done,
with nothing to submit.

A turn's lifecycle, driven by ``flow.controller.Controller`` (docs/architecture.md
draws it):

1. load the session (or a fresh one in ``idle``); if it is ``executing`` and
   its job has an outcome, apply the outcome first;
2. the engine decides once: it sees a read-only view and the toolset the
   current state offers (``core.actions``), and returns tool calls; it never
   mutates the session;
3. the controller applies each call through the action table, checking it
   against the toolset of the state the machine is in *at that moment*, and
   fires the machine's triggers; field values pass the validators and
   cross-field checks; a confirmed submission only records a job;
4. the reply is rendered from the business YAML prompts and ``replies``;
5. the session is saved (optimistically: on a concurrent save, step 3 runs
   again on the fresh session with the same decision: pure code only);
6. only then a recorded job runs its executor, once, outside any retry, and its
   outcome is applied to the session by a separate small transaction.

The machine only moves the ``state``; conditions pick the destination. The
definition is checked when built: a single initial state, every state
reachable from it, and every trigger known.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Any

from transitions import Machine, MachineError

from si_agent.core.state import State
from si_agent.errors import InvalidMachine

IDLE, COLLECTING, STEP_EXECUTING, CONFIRMING, EXECUTING, DONE, FAILED = (
    State.IDLE.value, State.COLLECTING.value, State.STEP_EXECUTING.value,
    State.CONFIRMING.value, State.EXECUTING.value, State.DONE.value, State.FAILED.value,
)  # plain strings: ``transitions`` would name Enum states by their member names
STATES: tuple[str, ...] = tuple(s.value for s in State)
INITIAL = IDLE

TRANSITIONS: tuple[dict[str, Any], ...] = (
    {"trigger": "begin", "source": [IDLE, DONE], "dest": STEP_EXECUTING,
     "conditions": "steps_pending"},
    {"trigger": "begin", "source": [IDLE, DONE], "dest": COLLECTING},
    {"trigger": "fields_done", "source": COLLECTING, "dest": DONE,
     "conditions": "concludes"},
    {"trigger": "fields_done", "source": COLLECTING, "dest": STEP_EXECUTING,
     "conditions": "steps_pending"},
    {"trigger": "fields_done", "source": COLLECTING, "dest": CONFIRMING,
     "conditions": "requires_confirm"},
    {"trigger": "fields_done", "source": COLLECTING, "dest": EXECUTING},
    {"trigger": "steps_done", "source": STEP_EXECUTING, "dest": COLLECTING,
     "conditions": "fields_pending"},
    {"trigger": "steps_done", "source": STEP_EXECUTING, "dest": CONFIRMING,
     "conditions": "requires_confirm"},
    {"trigger": "steps_done", "source": STEP_EXECUTING, "dest": EXECUTING},
    {"trigger": "suspend", "source": [COLLECTING, STEP_EXECUTING, CONFIRMING],
     "dest": IDLE},
    {"trigger": "modify", "source": [COLLECTING, CONFIRMING], "dest": COLLECTING},
    {"trigger": "redo", "source": [COLLECTING, CONFIRMING, FAILED],
     "dest": STEP_EXECUTING},
    {"trigger": "confirm", "source": CONFIRMING, "dest": EXECUTING},
    {"trigger": "succeed", "source": EXECUTING, "dest": DONE},
    {"trigger": "fail", "source": EXECUTING, "dest": FAILED},
    {"trigger": "retry", "source": FAILED, "dest": EXECUTING},
    {"trigger": "fix", "source": FAILED, "dest": COLLECTING},
    {"trigger": "cancel", "source": "*", "dest": IDLE},
)
CONDITIONS = ("requires_confirm", "steps_pending", "fields_pending", "concludes")


Flag = bool | Callable[[], bool]


class FlowModel:
    """The object the machine moves; its conditions describe the business in progress.

    A condition is a bool, or a function asked only when a transition needs it.
    """

    def __init__(self, state: str, requires_confirm: Flag = False, *,
                 steps_pending: Flag = False, fields_pending: Flag = False,
                 concludes: Flag = False) -> None:
        self.state = str(state)  # plain: ``transitions`` looks Enum states up by name
        self._flags = {"requires_confirm": requires_confirm, "steps_pending": steps_pending,
                       "fields_pending": fields_pending, "concludes": concludes}

    def _flag(self, name: str) -> bool:
        flag = self._flags[name]
        return bool(flag() if callable(flag) else flag)

    def requires_confirm(self) -> bool:
        return self._flag("requires_confirm")

    def steps_pending(self) -> bool:
        return self._flag("steps_pending")

    def fields_pending(self) -> bool:
        return self._flag("fields_pending")

    def concludes(self) -> bool:
        return self._flag("concludes")


def _sources(t: dict[str, Any]) -> tuple[str, ...]:
    src = t["source"]
    if src == "*":
        return STATES
    return tuple(src) if isinstance(src, list) else (src,)


def triggers_from(state: str) -> frozenset[str]:
    """The triggers the machine accepts in ``state`` (for some condition values)."""
    return _TRIGGERS_FROM[state]


_TRIGGERS_FROM: dict[str, frozenset[str]] = {
    s: frozenset(t["trigger"] for t in TRANSITIONS if s in _sources(t)) for s in STATES
}


class DialogueMachine:
    """One shared, checked machine definition that moves ``FlowModel`` objects."""

    def __init__(self) -> None:
        check_definition(STATES, INITIAL, TRANSITIONS)
        self._machine = Machine(
            model=None,
            states=list(STATES),
            transitions=[dict(t) for t in TRANSITIONS],
            initial=INITIAL,
            auto_transitions=False,
            send_event=False,
        )

    def fire(self, model: FlowModel, trigger: str) -> bool:
        """Fire ``trigger`` on ``model``; True if a transition ran.

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
        src = t["source"]
        sources = states if src == "*" else (tuple(src) if isinstance(src, list) else (src,))
        for s in sources:
            if s not in known or t["dest"] not in known:
                raise InvalidMachine(f"transition {t!r} names an unknown state")
            edges[s].add(t["dest"])
        for cond in (t.get("conditions"), t.get("unless")):
            if cond is not None and cond not in CONDITIONS:
                raise InvalidMachine(f"transition {t!r} names an unknown condition {cond!r}")
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
        for src in _sources(t):
            if src != t["dest"]:
                lines.append(f"    {src} --> {t['dest']}: {label}")
    return "\n".join(lines) + "\n"
