"""End to end: a knowledge question through the real controller, then "办理"."""

from __future__ import annotations

import pytest

from si_agent.config.loader import load_businesses
from si_agent.engine.rules import RuleEngine
from si_agent.executor import Executors
from si_agent.flow.controller import Controller
from si_agent.session import MemoryStore

from .conftest import ROOT


@pytest.fixture
def controller(kb, kb_settings, tmp_path):
    catalog = load_businesses(ROOT / "businesses")
    settings = kb_settings.replace(business_dir=ROOT / "businesses", data_dir=tmp_path)
    with Executors(settings) as executors:
        yield Controller(catalog, MemoryStore(), RuleEngine(catalog), executors, knowledge=kb)


def test_question_answer_then_accept_the_suggestion(controller):
    turn = controller.handle("u1", "社保转移需要什么材料？")
    assert "本人有效身份证件或社保卡" in turn.reply
    assert "来源：《社保关系转移接续办理指南》" in turn.reply
    assert "【社保关系转移】，回复“办理”即可开始" in turn.reply
    assert turn.state == "idle"
    assert turn.suggestion is not None and turn.suggestion.business_id == "social_transfer"

    turn = controller.handle("u1", "办理")
    assert turn.state == "collecting"
    assert turn.business is not None and turn.business.id == "social_transfer"
    assert "开始为您办理【社保关系转移】" in turn.reply


def test_the_refusal_of_another_case_does_not_lead(controller):
    """A voluntary quit does not qualify; a dismissed worker does: the answer to the
    dismissed worker must not open with the voluntary quit's refusal."""
    quit_ = controller.handle("u5", "主动辞职还能领失业金不")
    assert quit_.reply.startswith("主动辞职属于本人意愿中断就业，一般不能领取失业保险金。")
    assert quit_.state == "idle"
    dismissed = controller.handle("u6", "我被辞退了能领失业金吗")
    assert not dismissed.reply.startswith("主动辞职"), dismissed.reply
    assert dismissed.state == "idle"


def test_unrelated_question_falls_back_to_the_generic_reply(controller):
    turn = controller.handle("u2", "推荐一部电影好不好看的")
    assert "来源：" not in turn.reply
    assert turn.state == "idle"


def test_a_commercial_insurance_question_recommends_the_consultation(controller):
    turn = controller.handle("u3", "重疾险和医疗险有什么区别？")
    assert "按实际发生的医疗费用报销" in turn.reply
    assert turn.state == "idle"
    assert turn.suggestion is not None and turn.suggestion.business_id == "insurance_consult"

    turn = controller.handle("u3", "办理")
    assert turn.state == "collecting" and turn.business.id == "insurance_consult"
    assert "请问您的年龄、职业和大概年收入区间" in turn.reply

    # Mid-consultation the same question is answered and the theme asked again.
    turn = controller.handle("u3", "重疾险和医疗险有什么区别？")
    assert "按实际发生的医疗费用报销" in turn.reply
    assert turn.reply.endswith("请问您的年龄、职业和大概年收入区间？")
    assert turn.state == "collecting"


def test_a_consultation_answers_without_a_second_model_call(controller, kb, monkeypatch):
    """A model writing answers (the generator) is not called during a consultation:
    its turn has one model call at most, the decision's."""
    written: list[str] = []

    def generator(question, passages):
        written.append(question)
        return "模型写的回答 [1]"

    monkeypatch.setattr(kb, "generator", generator)
    turn = controller.handle("u4", "重疾险和医疗险有什么区别？")  # idle: the model may write it
    assert written and "模型写的回答" in turn.reply
    controller.handle("u4", "办理")
    written.clear()
    turn = controller.handle("u4", "重疾险和医疗险有什么区别？")
    assert written == [] and "按实际发生的医疗费用报销" in turn.reply
    assert turn.state == "collecting"
