"""Talk while a business runs: small talk (a greeting or thanks said back briefly), a
refusal to give a field, a question
about a field's term or about how to fill the awaited field ("咋填", "编号在哪能看到")."""

from __future__ import annotations

from si_agent.config.model import Business
from si_agent.core import actions as T
from si_agent.core.decision import Rule
from si_agent.engine import cues
from si_agent.engine import lexicon as L
from si_agent.engine.rules.calls import Ruled, explain_call, small_talk_call
from si_agent.engine.rules.extraction import has_strong_values, values_for
from si_agent.engine.rules.mentions import mentioned_field
from si_agent.engine.rules.questions import asks_about_field, asks_what_field_holds
from si_agent.validators import check


def handoff(text: str, offered: frozenset[str]) -> Ruled | None:
    """A person or a complaint asked for ("太麻烦了 我要找人工"): it has priority over
    any value in every state; the business in progress stays."""
    if T.SMALL_TALK in offered and L.small_talk(text) == "handoff":
        return [small_talk_call("handoff")], Rule.SMALL_TALK, "handoff"
    return None


def courtesy(text: str, offered: frozenset[str]) -> Ruled | None:
    """"你好", "谢谢" while a business runs: said back briefly, and the business goes on
    ("帮助", "你能做什么" ask for the services)."""
    if T.SMALL_TALK not in offered or not (L.is_greeting(text) or L.is_thanks(text)):
        return None
    kind = ("greeting" if L.is_salutation(text) else "services" if L.is_greeting(text)
            else "closing")
    return [small_talk_call(kind)], Rule.SMALL_TALK, f"{kind} mid-business"


def decide(business: Business, awaited: str | None, text: str,
           offered: frozenset[str]) -> Ruled | None:
    """Small talk, a refusal, or a question about a field, while a business runs."""
    kind = L.small_talk(text)
    if kind in ("handoff", "self_intro") and T.SMALL_TALK in offered:
        return [small_talk_call(kind)], Rule.SMALL_TALK, kind
    if T.EXPLAIN_FIELD not in offered:
        return None
    named = mentioned_field(business, text)
    if (L.is_refusal(text) and not has_strong_values(business, text)
            and not _answers(business, awaited, text)):
        key = named or awaited
        if key is not None:
            return [explain_call(key, "why")], Rule.REFUSAL, f"why {key} is needed"
    about_awaited = awaited is not None and (
        asks_about_field(business.field(awaited), text)
        or (asks_what_field_holds(business.field(awaited), text)
            and not _answers(business, awaited, text)))
    # A reproach with the right value ("怎么写成苏州了？我要转的是无锡") corrects; it asks nothing.
    if (L.is_question(text) or L.ASKS_MEANING.search(text) or about_awaited) and (
            cues.not_but(text) is None):
        key = named or (awaited if L.ASKS_MEANING.search(text) or about_awaited else None)
        # How to fill the awaited field: its help, or (without one) its prompt again,
        # never a passage about the business.
        if key is not None and (business.field(key).help or (about_awaited and key == awaited)):
            return [explain_call(key, "help")], Rule.FIELD_HELP, f"what {key} means"
    return None


def _answers(business: Business, awaited: str | None, text: str) -> bool:
    """Whether ``text`` also gives the awaited value ("不方便的话寄到公司，文三路100号")."""
    if awaited is None:
        return False
    field = business.field(awaited)
    if field.type == "text" and not field.pattern:
        return any(c.isdigit() for c in text)  # an address has a number; a refusal not
    value = values_for(business, awaited, L.strip_preamble(text), whole=True).get(awaited)
    return value is not None and check(field.type, value, **field.validator_options()).ok
