"""Rules while confirming or after a failure: confirm, retry, modify, redo a step, cancel.

A field to modify is named by its label or by a value whose type fits only one
field; a step to redo by its label.
"""

from __future__ import annotations

from si_agent.core import actions as T
from si_agent.core.decision import Rule, SessionView, ToolCall
from si_agent.engine import cues
from si_agent.engine import lexicon as L
from si_agent.engine.rules import services, talk
from si_agent.engine.rules.calls import Ruled, answer_call, modify_call, redo_call
from si_agent.engine.rules.corrections import corrected
from si_agent.engine.rules.extraction import modify_call_for, values_for
from si_agent.engine.rules.interrupts import interrupted
from si_agent.engine.rules.matching import BusinessIndex
from si_agent.engine.rules.mentions import (
    mentioned_field,
    mentioned_step,
    named_field,
    whole_message_fits,
)


def decide(index: BusinessIndex, view: SessionView, text: str,
           offered: frozenset[str]) -> Ruled:
    """The rules when confirming, retrying, modifying or redoing a step is offered."""
    business = view.business
    assert business is not None
    interrupt = services.decide(text, offered) or interrupted(index, view, text, offered)
    if interrupt is not None:
        return interrupt
    talked = talk.decide(business, None, text, offered)
    if talked is not None:
        return talked
    if L.is_contentless(text):  # "？？", "。。。": the summary again, nothing looked up
        return [], Rule.CONVERSATIONAL, "nothing but punctuation or interjections"
    failed = T.CONFIRM_SUBMIT not in offered  # after a failure: retry, not confirm
    if failed and (L.is_retry(text) or L.is_confirm(text)):
        if T.RETRY_SUBMIT in offered:
            return [ToolCall(name=T.RETRY_SUBMIT)], Rule.RETRY_WORD, "retry word"
        return [], Rule.RETRY_WORD, "retry word, but this failure cannot be retried"
    if L.is_question(text) and not L.wants_modify(text) and cues.not_but(text) is None:
        return [answer_call(text, None)], Rule.QUESTION, "question"
    step = mentioned_step(business, text)
    if step and T.REDO_STEP in offered:
        return [redo_call(step)], Rule.MODIFY, f"redo step {step}"
    target = mentioned_field(business, text) if T.MODIFY_INFO in offered else None
    if target:
        return [modify_call_for(business, target, text)], Rule.MODIFY, f"modify {target}"
    correcting = cues.is_correction(text) or cues.not_but(text) is not None
    if (L.wants_modify(text) or correcting) and T.MODIFY_INFO in offered:
        named = named_field(business, text)  # "地址写错了，应该是…", "名字写错了"
        if named:
            return [modify_call_for(business, named, text)], Rule.MODIFY, f"modify {named}"
        fixed = corrected(business, view, None, text) if correcting else None
        if fixed and len(fixed) == 1:  # "不对，是张伟", "刘阳是错的 应该是刘洋"
            key, value = next(iter(fixed.items()))
            return [modify_call(key, value)], Rule.MODIFY, f"{key} corrected"
        values = values_for(business, None, text, whole=False)
        if len(values) == 1:
            key, value = next(iter(values.items()))
            return [modify_call(key, value)], Rule.MODIFY, f"modify {key}"
        return [], Rule.MODIFY, "modify, but which field is unclear"
    if T.CONFIRM_SUBMIT in offered and L.is_confirm(text):
        return [ToolCall(name=T.CONFIRM_SUBMIT)], Rule.CONFIRM_WORD, "confirm word"
    polite = talk.courtesy(text, offered)
    if polite is not None:
        return polite
    if L.is_question(text) or L.is_conversational(text):
        if L.is_question(text):
            return [answer_call(text, None)], Rule.QUESTION, "question"
        return [], Rule.CONVERSATIONAL, "conversational"
    if T.MODIFY_INFO not in offered:
        return [], Rule.NONE, "not understood"
    values = values_for(business, None, text, whole=False)
    names = [f for f in business.fields if f.type == "name"]
    if not values and len(names) == 1 and whole_message_fits(names[0], text):
        values = {names[0].key: text}
    if len(values) == 1:
        key, value = next(iter(values.items()))
        return [modify_call(key, value)], Rule.MODIFY, f"a value that fits only {key}"
    return [], Rule.NONE, "not understood"
