"""How sure a rule decision is: ``SURE`` when a model could add nothing."""

from __future__ import annotations

from si_agent.core.decision import SURE, Rule, SessionView, ToolCall
from si_agent.engine import lexicon as L
from si_agent.validators import check

_SURE_RULES = frozenset({Rule.CANCEL_WORD, Rule.SKIP_WORD, Rule.CONFIRM_WORD, Rule.RETRY_WORD,
                         Rule.ACCEPTED_SUGGESTION, Rule.RESUME, Rule.SMALL_TALK})
_UNSURE = 0.5


def score(view: SessionView, calls: list[ToolCall], rule: Rule, text: str) -> float:
    """How sure the rules are; ``SURE`` means a model could add nothing.

    Never sure with a question in the message (it deserves an answer), nor of
    free text (a pattern-less text field accepts anything).
    """
    if rule in _SURE_RULES:
        return SURE
    if rule is Rule.NONE:
        return 0.0
    started = view.catalog.get(calls[0].arguments.get("business_id", "")) if (
        rule is Rule.EXACT_KEYWORD and calls) else None
    if started is not None and started.is_consult:
        return SURE  # asking how to choose ("怎么配置") is what a consultation is for
    if L.is_question(text):
        return _UNSURE
    if rule is Rule.EXACT_KEYWORD:
        return SURE
    business = view.business
    if rule is Rule.VALUES and business is not None and business.is_consult:
        return SURE  # typed values, cued text or aliases: the model could add nothing
    if rule is Rule.VALUES and business is not None and calls:
        values = calls[-1].arguments["values"]
        awaited = view.awaiting if view.awaiting in values else None
        fields = [business.field(k) for k in values]
        # Free text is sure only when a cue introduced it ("地址是…"), not as a whole message.
        sure = awaited is not None and all(
            not (f.type == "text" and not f.pattern and values[f.key] == text)
            and check(f.type, values[f.key], **f.validator_options()).ok
            for f in fields
        )
        return SURE if sure else _UNSURE
    return _UNSURE
