"""Questions in the middle of a business, answered by the real knowledge base with the
business as their context (issue 25, class 1): "这个收费不" while a name is awaited for
社保卡申领 is about the card's fee, never "暂时无法回答"."""

from __future__ import annotations

import pytest

from rag import BusinessTerms
from rag.query import QueryUnderstanding
from si_agent.config.loader import load_businesses
from si_agent.engine.rules import RuleEngine
from si_agent.executor import Executors
from si_agent.flow.controller import Controller
from si_agent.knowledge import business_terms
from si_agent.session import MemoryStore

from .conftest import ROOT


def test_a_question_naming_nothing_is_read_in_the_context():
    understanding = QueryUnderstanding(businesses=[
        BusinessTerms("card_apply", "社保卡申领", ("社保卡",)),
        BusinessTerms("unemployment_benefit", "失业保险金申领", ("失业金",))])
    query = understanding.understand("这个收费不", context="社保卡申领")
    assert query.text == "社保卡申领 这个收费不"
    assert query.original == "这个收费不"
    assert query.businesses == ("card_apply",)
    # A question naming a business of its own keeps it, whatever the context.
    own = understanding.understand("失业金多久到账", context="社保卡申领")
    assert own.text == "失业金多久到账"
    assert understanding.understand("这个收费不").text == "这个收费不"


@pytest.fixture
def controller(kb, kb_settings, tmp_path, monkeypatch):
    catalog = load_businesses(ROOT / "businesses")
    settings = kb_settings.replace(business_dir=ROOT / "businesses", data_dir=tmp_path)
    # As the product builds it: the businesses' words expand the questions.
    monkeypatch.setattr(kb, "understanding", QueryUnderstanding(kb.understanding.table,
                                                                business_terms(catalog)))
    with Executors(settings) as executors:
        yield Controller(catalog, MemoryStore(), RuleEngine(catalog), executors, knowledge=kb)


MIDFLOW = [
    # (the message that starts the business, the awaited field, the question, a fact)
    ("我要办社保卡", "name", "这个收费不", "不收取工本费"),
    ("我要办社保卡", "name", "能寄到家里吗", "邮寄"),
    ("社保转移，从杭州转到苏州", "id_number", "转过去以后 之前交的年限会不会断啊", "累计计算"),
    ("帮我查养老金", "id_number", "每个月几号发啊", "按月发放"),
    ("申领失业金 黄晓燕 320502199203184563 手机13771234567", "separation_date",
     "钱哪天到账啊", "10日内"),
]


@pytest.mark.parametrize("start,awaited,question,fact", MIDFLOW,
                         ids=[m[2] for m in MIDFLOW])
def test_a_midflow_question_is_answered_for_the_business(controller, start, awaited,
                                                         question, fact):
    first = controller.handle("m", start)
    assert first.awaiting == awaited
    turn = controller.handle("m", question)
    assert (turn.state, turn.awaiting) == ("collecting", awaited)
    assert turn.business == first.business
    assert "暂时无法回答" not in turn.reply
    assert fact in turn.reply, turn.reply
    assert "来源：" in turn.reply
    assert turn.reply.split("\n")[-1] == first.reply.split("\n")[-1]  # asked again
