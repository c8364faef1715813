"""How sure a rule decision is: ``SURE`` when a model could add nothing."""

from __future__ import annotations

from si_agent.core import actions as T
from si_agent.core.decision import SURE, Rule, SessionView, ToolCall
from si_agent.engine import lexicon as L
from si_agent.engine.rules import polarity
from si_agent.validators import check

_SURE_RULES = frozenset({Rule.CANCEL_WORD, Rule.SKIP_WORD, Rule.CONFIRM_WORD, Rule.RETRY_WORD,
                         Rule.ACCEPTED_SUGGESTION, Rule.RESUME, Rule.SMALL_TALK})
_UNSURE = 0.5
_TYPED = ("idcard", "phone", "bank_card")  # a number no frame word can be mistaken for


def score(view: SessionView, calls: list[ToolCall], rule: Rule, text: str) -> float:
    """How sure the rules are; ``SURE`` means a model could add nothing.

    Never sure with a question in the message (it deserves an answer), nor of
    free text (a pattern-less text field accepts anything), nor when a correction,
    negation, hedge or filler cue touched the decision ("改回张伟", "不要最低档").
    """
    if rule in _SURE_RULES or L.is_contentless(text):
        return SURE  # ("？？", "。。。": nothing a model could read more into)
    if rule is Rule.NONE:
        return 0.0
    if polarity.touched(view.business, text) and not _typed_only(view, calls):
        return _UNSURE  # a correction, negation, hedge or filler: the model reads it
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


def _typed_only(view: SessionView, calls: list[ToolCall]) -> bool:
    """Whether the calls store only ID, phone and bank card numbers ("换成13911112222"):
    a correction frame cannot leak into those."""
    business = view.business
    values = [(k, v) for c in calls if c.name == T.PROVIDE_FIELD
              for k, v in c.arguments.get("values", {}).items()]
    values += [(c.arguments["field_key"], c.arguments.get("value")) for c in calls
               if c.name == T.MODIFY_INFO and c.arguments.get("field_key")]
    stores = all(c.name in (T.PROVIDE_FIELD, T.MODIFY_INFO) for c in calls)
    return bool(business and values and stores and all(
        k in business.field_keys and business.field(k).type in _TYPED and v for k, v in values))
