"""Rules while confirming or after a failure: confirm, retry, modify, redo a step, cancel.

A field to modify is named by its label or by a value whose type fits only one
field; a step to redo by its label.
"""

from __future__ import annotations

from si_agent.engine import lexicon as L
from si_agent.engine.base import Rule, SessionView, ToolCall
from si_agent.engine.rules.calls import _answer, _cancel, _modify_call, _redo, _Ruled
from si_agent.engine.rules.extraction import _modify, values_for
from si_agent.engine.rules.matching import BusinessIndex
from si_agent.engine.rules.mentions import (
    _mentioned_field,
    _mentioned_step,
    _named_field,
    _whole_message_fits,
)
from si_agent.engine.rules.steps import _skip
from si_agent.engine.rules.switching import _switch_rule
from si_agent.engine.rules.talk import _talk_in_flow
from si_agent.flow import actions as T


def _confirming(index: BusinessIndex, view: SessionView, text: str,
                offered: frozenset[str]) -> _Ruled:
    business = view.business
    assert business is not None
    switch = _switch_rule(index, view, text, offered)
    if switch is not None:
        return switch
    skip = _skip(view, text, offered)
    if skip is not None:
        return skip
    if L.is_cancel(text):
        return [_cancel()], Rule.CANCEL_WORD, "cancel word"
    talk = _talk_in_flow(business, None, text, offered)
    if talk is not None:
        return talk
    failed = T.CONFIRM_SUBMIT not in offered  # after a failure: retry, not confirm
    if failed and (L.is_retry(text) or L.is_confirm(text)):
        if T.RETRY_SUBMIT in offered:
            return [ToolCall(name=T.RETRY_SUBMIT)], Rule.RETRY_WORD, "retry word"
        return [], Rule.RETRY_WORD, "retry word, but this failure cannot be retried"
    if L.is_question(text) and not L.wants_modify(text):
        return [_answer(text, None)], Rule.QUESTION, "question"
    step = _mentioned_step(business, text)
    if step and T.REDO_STEP in offered:
        return [_redo(step)], Rule.MODIFY, f"redo step {step}"
    target = _mentioned_field(business, text) if T.MODIFY_INFO in offered else None
    if target:
        return [_modify(business, target, text)], Rule.MODIFY, f"modify {target}"
    if L.wants_modify(text) and T.MODIFY_INFO in offered:
        named = _named_field(business, text)  # "地址写错了，应该是…", "名字写错了"
        if named:
            return [_modify(business, named, text)], Rule.MODIFY, f"modify {named}"
        values = values_for(business, None, text, whole=False)
        if len(values) == 1:
            key, value = next(iter(values.items()))
            return [_modify_call(key, value)], Rule.MODIFY, f"modify {key}"
        return [], Rule.MODIFY, "modify, but which field is unclear"
    if T.CONFIRM_SUBMIT in offered and L.is_confirm(text):
        return [ToolCall(name=T.CONFIRM_SUBMIT)], Rule.CONFIRM_WORD, "confirm word"
    if L.is_question(text) or L.is_conversational(text):
        if L.is_question(text):
            return [_answer(text, None)], Rule.QUESTION, "question"
        return [], Rule.CONVERSATIONAL, "conversational"
    if T.MODIFY_INFO not in offered:
        return [], Rule.NONE, "not understood"
    values = values_for(business, None, text, whole=False)
    names = [f for f in business.fields if f.type == "name"]
    if not values and len(names) == 1 and _whole_message_fits(names[0], text):
        values = {names[0].key: text}
    if len(values) == 1:
        key, value = next(iter(values.items()))
        return [_modify_call(key, value)], Rule.MODIFY, f"a value that fits only {key}"
    return [], Rule.NONE, "not understood"
