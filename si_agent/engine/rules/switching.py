"""Another business named while one runs: switch, resume a kept one, or ask once."""

from __future__ import annotations

from si_agent.config.model import Business
from si_agent.core import actions as T
from si_agent.core.decision import Rule, SessionView
from si_agent.engine import lexicon as L
from si_agent.engine.rules.calls import Ruled, answer_call, cancel_call, switch_call
from si_agent.engine.rules.idle import start
from si_agent.engine.rules.matching import MARGIN, MATCH_THRESHOLD, BusinessIndex, mask_codes
from si_agent.engine.rules.mentions import mentioned_field, whole_message_fits
from si_agent.engine.rules.polarity import occurrences


def decide(index: BusinessIndex, view: SessionView, text: str,
           offered: frozenset[str]) -> Ruled | None:
    """Another business named mid-flow: switch (after "要先办理…吗？" was answered
    yes, or at once when the current one is dropped for good), or ask once."""
    business = view.business
    if business is None or T.SWITCH_BUSINESS not in offered:
        return None
    pending = view.suggestion if view.suggestion in index.businesses else None
    pending = pending if pending != business.id else None
    if pending and L.is_switch_yes(text):
        return [switch_call(pending)], Rule.SWITCH, f"switch to {pending}: accepted"
    explicit = L.abandons(text)
    named = explicit or index.names_a_business(text)
    bid, score, span, runner_up = index.match(text) if named else (None, 0.0, None, 0.0)
    if pending and bid == pending and score >= MATCH_THRESHOLD:
        # "还是先查养老金吧": the answer names the business asked about.
        return [switch_call(pending)], Rule.SWITCH, f"switch to {pending}: named"
    if pending and L.is_decline(text):
        return [], Rule.DECLINED, f"switch to {pending}: declined"
    if bid is None or bid == business.id or score - runner_up < MARGIN:
        return None
    if span and _inside_own_option(business, text, span):
        return None  # "能报看病报销的": an option here (医疗险), not 异地就医's 看病
    if bid in view.suspended and L.RESUME.search(text):
        # "继续办理【社保卡挂失】" (the page's button): a kept business, taken up again.
        return [switch_call(bid)], Rule.SWITCH, f"resume {bid}"
    if not (score >= 1.0 or (explicit and score >= MATCH_THRESHOLD)):
        return None
    if L.wants_modify(text) and mentioned_field(business, text):
        return None  # "修改手机号码" changes a field here, it is not 联系电话变更
    masked = mask_codes(text)
    rest = masked[: span[0]] + masked[span[1]:] if span else masked
    if L.is_how_question(rest) and not explicit:
        return None  # a question about the other business, answered in place
    awaited = view.awaiting if view.awaiting in business.field_keys else None
    if awaited is not None:
        field = business.field(awaited)
        if field.type not in ("text", "name") and whole_message_fits(field, text):
            return None  # a valid answer that happens to contain a keyword
    if explicit:
        calls = [cancel_call(), *start(index, view, index.businesses[bid], text)]
        return calls, Rule.SWITCH, f"dropped {business.id} for {bid} (score {score:.2f})"
    return [answer_call("", bid)], Rule.SWITCH, f"ask to switch to {bid} (score {score:.2f})"


def _inside_own_option(business: Business, text: str, span: tuple[int, int]) -> bool:
    """Whether the other business's keyword at ``span`` lies inside a longer option word
    (value or alias) of the current business's own choices."""
    for f in business.fields:
        for option in f.options:
            for word in (option.value, *option.aliases):
                if len(word) > span[1] - span[0] and any(
                        at <= span[0] and span[1] <= at + len(word)
                        for at in occurrences(word, text)):
                    return True
    return False
