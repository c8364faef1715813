"""Rules while no business runs (idle, done): match a business and start it.

A pending suggestion accepted ("办理") starts it; "办理" or "确认" alone without one
asks which business is meant (the services listed); otherwise the message is
matched to a business by keyword or similarity, and ``speech_act`` tells a
question (answered, the business recommended) from a request (the business
starts, with the values said in the same message).
"""

from __future__ import annotations

from collections.abc import Callable

from si_agent.config.model import MASKED_TYPES, Business
from si_agent.core import actions as T
from si_agent.core.decision import Rule, SessionView, ToolCall
from si_agent.engine import lexicon as L
from si_agent.engine.consult import asks_for_consultation, extract_slots
from si_agent.engine.rules import services
from si_agent.engine.rules.calls import Ruled, answer_call, cancel_call, match_call, small_talk_call
from si_agent.engine.rules.extraction import values_for
from si_agent.engine.rules.matching import (
    ASKED_THRESHOLD,
    MARGIN,
    MATCH_THRESHOLD,
    SUGGEST_THRESHOLD,
    BusinessIndex,
    mask_codes,
)
from si_agent.engine.speech_act import SpeechAct, classify

_PERSONAL = frozenset({"name", *MASKED_TYPES})


def decide(index: BusinessIndex, normalise: Callable[[str], str] | None, view: SessionView,
           text: str, offered: frozenset[str]) -> Ruled:
    """The rules when ``match_business`` is offered (``normalise`` reads the
    message for matching only)."""
    if view.suggestion is not None and view.suggestion in index.businesses and L.is_accept(text):
        return [match_call(view.suggestion)], Rule.ACCEPTED_SUGGESTION, (
            f"accepted suggestion {view.suggestion}")
    if L.is_contentless(text):  # "？？", "。。。": nothing to match nor to answer
        return [], Rule.NONE, "nothing but punctuation or interjections"
    listed = services.decide(text, offered)
    if listed is not None:
        return listed
    kind = L.small_talk(text)
    if kind is not None and T.SMALL_TALK in offered:
        return [small_talk_call(kind)], Rule.SMALL_TALK, kind
    read = normalise(text) if normalise else text  # 失叶金咋领 → 失业金怎么领
    bid, score, span, runner_up = index.match(read)
    kept = _resumed(index, view, text, bid if score >= MATCH_THRESHOLD else None)
    if kept is not None:
        return (start(index, view, kept, text, awaited=view.suspended_awaiting.get(kept.id)),
                Rule.RESUME, f"resume {kept.id}")
    if L.is_cancel(text) and score < MATCH_THRESHOLD and T.CANCEL_FLOW in offered:
        return [cancel_call()], Rule.CANCEL_WORD, "cancel word"
    if (view.state == "done" and view.business is not None and L.AGAIN.search(text)
            and (bid is None or score < MATCH_THRESHOLD)):
        return start(index, view, view.business, text), Rule.AGAIN, (
            f"again: {view.business.id}")
    masked = mask_codes(read)
    rest = masked[: span[0]] + masked[span[1]:] if span else masked
    if bid and score >= MATCH_THRESHOLD and score - runner_up >= MARGIN:
        business = index.businesses[bid]
        rule = Rule.EXACT_KEYWORD if score >= 1.0 else Rule.SIMILAR_KEYWORD
        given = values_for(business, None, index.without_keywords(business, text), whole=False)
        act, why = classify(read, rest, query=business.type == "query", values=len(given))
        starts = (asks_for_consultation(read, request=act is SpeechAct.REQUEST)
                  if business.is_consult else act is SpeechAct.REQUEST)
        if starts:
            # ("想买保险，不知道买哪种" asks for the consultation to start)
            return start(index, view, business, text), rule, (
                f"matched {bid} (score {score:.2f}; {why})")
        # A keyword only similar is a guess: the knowledge base's passages may say better.
        rule = Rule.QUESTION if score >= 1.0 else Rule.SUGGEST
        return [answer_call(text, bid)], rule, (
            f"question about {bid} (score {score:.2f}; {why})")
    question = L.is_question(read)
    if (bid and score >= ASKED_THRESHOLD and score - runner_up >= MARGIN and not question
            and L.REQUEST_OPENING.match(read)):
        # "我要改一下社保登记的手机号": asked for outright, and no other business is close.
        return start(index, view, index.businesses[bid], text), Rule.SIMILAR_KEYWORD, (
            f"request for {bid} (score {score:.2f})")
    if bid and score >= SUGGEST_THRESHOLD:
        # Not a question: only the suggestion is shown, asking to confirm the guess.
        return [answer_call(text if question else "", bid)], Rule.SUGGEST, (
            f"unsure: suggest {bid} (score {score:.2f})"
        )
    if (view.state == "done" and view.business is not None and L.OUTCOME_QUESTION.search(text)
            and (bid is None or score < MATCH_THRESHOLD) and T.SMALL_TALK in offered):
        # "我的申请提交了吗" right after it was: the outcome again.
        return [small_talk_call("nothing_pending")], Rule.SMALL_TALK, "asks how it went"
    if question or len(text) > 6:
        return [answer_call(text, None)], Rule.QUESTION, "question, no business"
    if L.asks_to_act(text) and T.SMALL_TALK in offered:
        # "办理", "确认" with nothing in progress or suggested: which business is meant?
        return [small_talk_call("nothing_pending")], Rule.SMALL_TALK, "nothing to go ahead with"
    if L.is_conversational(text) and T.SMALL_TALK in offered:
        return [small_talk_call("closing")], Rule.SMALL_TALK, "a filler reply: closing"
    return [], Rule.NONE, "no business matched"


def _resumed(index: BusinessIndex, view: SessionView, text: str,
             named: str | None) -> Business | None:
    """The kept business "继续" / "刚才那个接着办" / "继续，手机…" takes up again: the
    one named, else the one just offered, else the latest kept (switched or cancelled)."""
    if not view.suspended or not L.RESUME.search(text) or L.is_how_question(text):
        return None
    if named is not None:
        return index.businesses[named] if named in view.suspended else None
    bid = view.suggestion if view.suggestion in view.suspended else view.suspended[-1]
    return index.businesses.get(bid)


def start(index: BusinessIndex, view: SessionView, business: Business,
          text: str, *, awaited: str | None = None) -> list[ToolCall]:
    """Start ``business`` with the values in ``text`` and any it can reuse
    (``awaited``: the field a resumed business was waiting for, which a bare value
    answers: "继续 十三万五").

    The business's own keywords are blanked out first: "通讯地址备案" names the
    business, it does not give an address.
    """
    rest = index.without_keywords(business, text)
    if business.is_consult:  # slots said with the request ("我40岁，想咨询保险")
        found = extract_slots(business, {}, rest, guess=False)
        calls = [match_call(business.id)]
        if found.values:
            calls.append(ToolCall(name=T.PROVIDE_FIELD, arguments={"values": found.values}))
        return calls
    values = values_for(business, awaited, rest, whole=False)
    if view.state == "done" and view.result and view.business is not business:
        # A number just issued is what "查询办理进度" right after means (but
        # "再查一个" after a query asks about another one).
        # Personal data is not carried over: the citizen gives it for each business.
        for f in business.fields:
            if (f.key not in values and isinstance(view.result.get(f.key), str)
                    and f.type not in _PERSONAL):
                values[f.key] = view.result[f.key]
    calls = [match_call(business.id)]
    if values:
        calls.append(ToolCall(name=T.PROVIDE_FIELD, arguments={"values": values}))
    return calls
