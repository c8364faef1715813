"""What sets the current work aside before any value is read, in every state that
collects or confirms (issue 25: a person or a stop has priority over field values):
a person or a complaint asked for (the hand-off text; the business stays), another
business named (a switch), an optional step declined, a cancel word."""

from __future__ import annotations

from si_agent.core.decision import Rule, SessionView
from si_agent.engine import lexicon as L
from si_agent.engine.rules import steps, switching
from si_agent.engine.rules.calls import Ruled, cancel_call
from si_agent.engine.rules.matching import BusinessIndex
from si_agent.engine.rules.talk import handoff


def interrupted(index: BusinessIndex, view: SessionView, text: str,
                offered: frozenset[str]) -> Ruled | None:
    """The hand-off, switch, skip or cancel ``text`` asks for, or None."""
    person = handoff(text, offered)
    if person is not None:
        return person
    switch = switching.decide(index, view, text, offered)
    if switch is not None:
        return switch
    skip = steps.declined(view, text, offered)
    if skip is not None:
        return skip
    if L.is_cancel(text):
        return [cancel_call()], Rule.CANCEL_WORD, "cancel word"
    return None
