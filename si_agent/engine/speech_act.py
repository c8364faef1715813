"""Question or request: does a message that names a business ask about it, or ask to do it?

A request starts the business: "我要领失业金", "帮我办社保卡", "社保卡丢了",
"帮我查下养老金到账没". A question is answered first, then the business is
recommended ("回复“办理”即可开始"): "失业金怎么领", "养老金多久到账",
"主动辞职还能领失业金不" (the answer: a voluntary quit does not qualify),
"忘了认证会停发不".

The rules, in order (``classify``; the vocabularies are in ``lexicon``):

0. a wish not to ("我不想领失业金了", "不用帮我查") → question: nothing starts;
   a look-up given two or more of its inputs ("交了二十年社保，社平工资8000，60岁退休能拿多少")
   → request: running it is the answer; a message ending with a request ("退休金能领多少
   帮我算算") → request (one opening with it, "我要办社保卡，要带什么", is answered first,
   except for a look-up: "想做个养老金测算，估一下能领多少" is run, its result answers);
1. a how/what/how-long question (``HOW``: 怎么, 多久, 多少, 什么, 谁, 几, 是…还是…) → question;
2. a yes/no question (``YES_NO``: 吗, 呢, 会不会, a closing 不/没: "领失业金不", "审核过没")
   - pleading for help (``PLEA``: 帮我, 麻烦…帮, 给我办: "能帮我挂失吗") → request; a
     wish asked so ("我需要挂失吗", "我要领失业金吗") asks whether one must or may;
   - about what is still possible (``STILL``: "没记住受理编号，还能查进度吗") → question;
   - asking to look up, on a query business (``LOOKUP``: "社保交了几年能查吗") → request;
   - about what may happen or is allowed (``MODAL``: 会, 能, 可以, 要, 算…) → question;
   - on a query business, or naming an action (申请, 办理, 查询…) → request: looking
     it up is the answer ("我的养老金到账了吗");
   - otherwise → question;
3. no question at all → request, unless it asks to read the rules ("我想看看失业金政策").

The rule engine applies it when a message matches a business; with a model the
model makes the same choice (``answer_question`` or ``match_business``), told so
by its system prompt.
"""

from __future__ import annotations

import re
from enum import Enum

from si_agent.engine import lexicon as L


class SpeechAct(str, Enum):
    QUESTION = "question"  # answer it, then recommend the business
    REQUEST = "request"    # start the business


INPUTS = 2  # values for a look-up's fields that make a question a request to run it


def classify(text: str, rest: str, *, query: bool, values: int = 0) -> tuple[SpeechAct, str]:
    """Question or request, and the rule that said so.

    ``text`` is the whole message, ``rest`` the message without the business
    keyword it matched (a keyword such as "办理进度" must not read as a question
    word), ``query`` whether the business is a look-up, ``values`` how many of
    its field values the message gives.
    """
    if query and values >= INPUTS:
        return SpeechAct.REQUEST, "a look-up with its inputs given"
    if L.NOT_WANTED.search(text):
        return SpeechAct.QUESTION, "a wish not to do it"
    if _ends_with_request(text):
        return SpeechAct.REQUEST, "ends with a request"
    if query and _wishes(_parts(text)):
        return SpeechAct.REQUEST, "a wish to run a look-up: its result answers"
    if L.is_how_question(rest):
        return SpeechAct.QUESTION, "how/what question"
    if not L.is_question(rest):
        if L.ABOUT_RULES.search(rest):
            return SpeechAct.QUESTION, "asks to read the rules"
        return SpeechAct.REQUEST, "no question"
    if L.PLEA.search(text):
        return SpeechAct.REQUEST, "a plea for help asked as a question"
    if L.STILL.search(rest):
        return SpeechAct.QUESTION, "yes/no question about what is still possible"
    if query and L.LOOKUP.search(rest):
        return SpeechAct.REQUEST, "asks to look it up"
    if L.MODAL.search(rest):
        return SpeechAct.QUESTION, "yes/no question about what may happen"
    if query or L.has_intent(text):
        return SpeechAct.REQUEST, "yes/no question a look-up answers"
    return SpeechAct.QUESTION, "yes/no question"


def _ends_with_request(text: str) -> bool:
    """A request with no question after it: "退休金能领多少 帮我算算", "退休能领多少？我想算一下，
    退休年龄55周岁" (values may follow), not "我要办社保卡，要带什么" nor "我要领失业金吗"."""
    parts = _parts(text)
    wishes = _wishes(parts)
    return bool(wishes) and not any(L.is_question(p) for p in parts[wishes[-1] + 1:])


def _parts(text: str) -> list[str]:
    return [p.strip() for p in _PARTS.split(text) if p.strip()]


def _wishes(parts: list[str]) -> list[int]:
    """The clauses that ask for something outright ("想做个养老金测算")."""
    return [i for i, p in enumerate(parts) if L.REQUEST_OPENING.match(p) and not L.is_question(p)]


_PARTS = re.compile(r"[，,。；;！!？?\s]+")
