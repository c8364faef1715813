"""Rules while a step is awaited (an upload), and declining an optional step."""

from __future__ import annotations

from si_agent.core import actions as T
from si_agent.core.decision import Rule, SessionView, ToolCall
from si_agent.engine import lexicon as L
from si_agent.engine.rules import services, switching
from si_agent.engine.rules.calls import Ruled, answer_call, cancel_call
from si_agent.engine.rules.extraction import values_for
from si_agent.engine.rules.matching import BusinessIndex
from si_agent.engine.rules.talk import handoff


def decide(index: BusinessIndex, view: SessionView, text: str, offered: frozenset[str]) -> Ruled:
    """The rules when a step's upload tool is offered."""
    person = handoff(text, offered)
    if person is not None:
        return person
    switch = services.decide(text, offered) or switching.decide(index, view, text, offered)
    if switch is not None:
        return switch
    if T.SKIP_STEP in offered and L.SKIP.search(text) and not L.FILE_PATH.search(text):
        calls = [ToolCall(name=T.SKIP_STEP)]
        if any(L.is_confirm(c) for c in L.clauses(text)):  # confirming comes next
            calls.append(ToolCall(name=T.CONFIRM_SUBMIT))
        return calls, Rule.SKIP_WORD, "skip the step"
    if L.is_cancel(text):
        return [cancel_call()], Rule.CANCEL_WORD, "cancel word"
    path = L.FILE_PATH.search(text)
    if path and view.step is not None:
        return [ToolCall(name=T.step_tool_name(view.step), arguments={"file": path.group(0)})], (
            Rule.UPLOAD), "a file for the step"
    business = view.business
    if T.PROVIDE_FIELD in offered and business is not None:
        values = values_for(business, None, text, whole=False)
        if values and not L.is_question(text):
            return [ToolCall(name=T.PROVIDE_FIELD, arguments={"values": values})], (
                Rule.VALUES), "values typed during a step"
    if L.is_question(text) or len(text) > 6:
        return [answer_call(text, None)], Rule.QUESTION, "question during a step"
    return [], Rule.NONE, "waiting for the step's upload"


def declined(view: SessionView, text: str, offered: frozenset[str]) -> Ruled | None:
    """Declining the optional step offered while collecting or confirming ("跳过",
    "不用证件照"), and submitting in the same breath ("确认，不用照片")."""
    step = view.step
    if T.SKIP_STEP not in offered or step is None or not L.declines_step(text, step.label):
        return None
    calls = [ToolCall(name=T.SKIP_STEP)]
    if T.CONFIRM_SUBMIT in offered and any(L.is_confirm(c) for c in L.clauses(text)):
        calls.append(ToolCall(name=T.CONFIRM_SUBMIT))  # "确认，不用照片"
    return calls, Rule.SKIP_WORD, f"go on without {step.id}"
