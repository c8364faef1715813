"""Question or request: a message naming a business is answered first, or starts it."""

from __future__ import annotations

import pytest

from si_agent.engine import rules as R
from si_agent.engine.base import Rule, SessionView
from si_agent.engine.speech_act import SpeechAct, classify
from si_agent.flow import actions as T


@pytest.fixture(scope="module")
def engine(catalog) -> R.RuleEngine:
    return R.RuleEngine(catalog)


def _act(engine, catalog, text: str) -> SpeechAct:
    bid, _, span, _ = engine.match(text)
    masked = R._mask_codes(text)
    rest = masked[:span[0]] + masked[span[1]:] if span else masked
    return classify(text, rest, query=catalog[bid].type == "query")[0]


@pytest.mark.parametrize("text", [
    "社保转移需要什么材料",
    "挂失社保卡要多久",
    "失业金能领多少",
    "主动辞职还能领失业金不",       # a closing 不: a yes/no question, about what is allowed
    "忘了资格认证会停发不",
    "养老金会不会停发",             # A不A
    "失业金咋领",                   # dialect question word
    "领失业金要交税吗",
    "查养老金到账要多久",
])
def test_questions_are_answered(engine, catalog, text):
    assert _act(engine, catalog, text) is SpeechAct.QUESTION


@pytest.mark.parametrize("text", [
    "我要领失业金",
    "我要办社保卡",
    "帮我挂失社保卡",
    "社保卡丢了",
    "能帮我挂失社保卡吗",           # a request asked politely
    "我的养老金到账了吗",           # a query business: looking it up is the answer
    "社保交了几年能查吗",
    "帮我查下养老金到账没",
    "退休能领多少？我想算一下",     # a request in the second clause
])
def test_requests_start_the_business(engine, catalog, text):
    assert _act(engine, catalog, text) is SpeechAct.REQUEST


def _idle(catalog) -> SessionView:
    return SessionView(state="idle", business=None, fields={}, awaiting=None, suggestion=None,
                       step=None, history=(), catalog=catalog)


def _idle_tools(catalog) -> list[dict]:
    return T.toolset("idle", None, None, catalog)


def test_the_engine_answers_a_question_and_recommends(engine, catalog):
    decision = engine.decide(_idle(catalog), "主动辞职还能领失业金不", _idle_tools(catalog))
    assert decision.rule is Rule.QUESTION
    assert [c.name for c in decision.calls] == [T.ANSWER_QUESTION]
    assert decision.calls[0].arguments == {"question": "主动辞职还能领失业金不",
                                           "suggested_business_id": "unemployment_benefit"}
    assert "yes/no question about what may happen" in decision.reason


def test_the_engine_starts_a_request(engine, catalog):
    decision = engine.decide(_idle(catalog), "我要领失业金", _idle_tools(catalog))
    assert [c.name for c in decision.calls] == [T.MATCH_BUSINESS]
    assert decision.calls[0].arguments == {"business_id": "unemployment_benefit"}
