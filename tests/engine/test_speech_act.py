"""Question or request: a message naming a business is answered first, or starts it."""

from __future__ import annotations

import pytest

from si_agent.core import actions as T
from si_agent.core.decision import Rule, SessionView
from si_agent.engine import rules as R
from si_agent.engine.speech_act import SpeechAct


@pytest.fixture(scope="module")
def engine(catalog) -> R.RuleEngine:
    return R.RuleEngine(catalog)


def _idle(catalog) -> SessionView:
    return SessionView(state="idle", business=None, fields={}, awaiting=None, suggestion=None,
                       step=None, history=(), catalog=catalog)


def _idle_tools(catalog) -> list[dict]:
    return T.toolset("idle", None, None, catalog)


def _act(engine, catalog, text: str) -> SpeechAct:
    decision = engine.decide(_idle(catalog), text, _idle_tools(catalog))
    assert decision.calls, decision.reason
    return SpeechAct.REQUEST if decision.calls[0].name == T.MATCH_BUSINESS else SpeechAct.QUESTION


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
    "社保卡丢了是先挂失还是直接去补办",  # either-or
    "领失业金那段时间医保谁给交",
    "养老金资格认证一年要做几次",
    "失业保险金領取條件是什麼",       # traditional characters
    "提交完了没记住受理编号 还能查进度吗",
    "我妈退休了过来帮我带孩子 她在这边看病能报销吗",  # 帮我 not addressed to the assistant
    "可以用手机帮我妈刷脸认证吗",
    "我想问一下失业金怎么领",
    "我需要挂失吗",                 # a wish asked as a question: must I?
    "我要领失业金吗",
    "我得去认证吗",
    "我想看看失业金政策",           # reading the rules
    "我不想领失业金了",             # a wish not to: nothing starts
    "我不要领失业金",
    "给孩子买什么保险好",           # a plain what-question about the consultation's topic
    "我要办社保卡需要什么材料",       # opens with a request, asks something: answered first
])
def test_questions_are_answered(engine, catalog, text):
    assert _act(engine, catalog, text) is SpeechAct.QUESTION


@pytest.mark.parametrize("text", [
    "我要领失业金",
    "我要办社保卡",
    "想买保险，不知道买哪种",       # a wish for the consultation
    "我想咨询一下买什么保险合适",
    "帮我挂失社保卡",
    "社保卡丢了",
    "能帮我挂失社保卡吗",           # a request asked politely
    "我的养老金到账了吗",           # a query business: looking it up is the answer
    "社保交了几年能查吗",
    "帮我查下养老金到账没",
    "退休能领多少？我想算一下",     # a request in the second clause
    "社保卡被偷了 赶紧帮我冻结",
    "我交了二十年社保 社平工资8000 60岁退休大概能拿多少",  # a look-up with its inputs
    "我要改一下社保登记的手机号",     # asked for outright; the keyword only similar
    "退休金能领多少 帮我算算",         # ends with a request
])
def test_requests_start_the_business(engine, catalog, text):
    assert _act(engine, catalog, text) is SpeechAct.REQUEST


def test_the_engine_answers_a_question_and_recommends(engine, catalog):
    decision = engine.decide(_idle(catalog), "主动辞职还能领失业金不", _idle_tools(catalog))
    assert decision.rule is Rule.QUESTION
    assert [c.name for c in decision.calls] == [T.ANSWER_QUESTION]
    assert decision.calls[0].arguments == {"question": "主动辞职还能领失业金不",
                                           "suggested_business_id": "unemployment_benefit"}
    assert "yes/no question about what is still possible" in decision.reason


def test_the_engine_starts_a_request(engine, catalog):
    decision = engine.decide(_idle(catalog), "我要领失业金", _idle_tools(catalog))
    assert [c.name for c in decision.calls] == [T.MATCH_BUSINESS]
    assert decision.calls[0].arguments == {"business_id": "unemployment_benefit"}


def test_the_app_engine_reads_typos_and_dialect(catalog, tmp_path):
    """``create_engine`` gives the rule engine the knowledge base's normaliser: a typo'd
    request starts its business; values are read as typed."""
    from si_agent.config.settings import Settings
    from si_agent.engine.registry import create_engine

    engine = create_engine("rules", catalog, Settings(data_dir=tmp_path))
    decision = engine.decide(_idle(catalog), "我要领失叶金", _idle_tools(catalog))
    assert decision.calls[0].arguments == {"business_id": "unemployment_benefit"}
    decision = engine.decide(_idle(catalog), "退修金能领多少 帮我算算", _idle_tools(catalog))
    assert decision.calls[0].arguments == {"business_id": "pension_estimate"}
    decision = engine.decide(_idle(catalog), "社宝卡丢了咋整", _idle_tools(catalog))
    assert decision.calls[0].arguments == {"question": "社宝卡丢了咋整",
                                           "suggested_business_id": "card_loss"}
