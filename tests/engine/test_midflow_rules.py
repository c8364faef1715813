"""The rules for questions in the middle of a business and for the services list
(issue 25, classes 1 and 7): the question form decides, not one business's words."""

from __future__ import annotations

import pytest

from si_agent.engine.rules.questions import asks_about_field, asks_clause, split
from si_agent.engine.rules.services import asks_for_services


@pytest.mark.parametrize("text", [
    "这个收费不", "得准备些啥", "多久能拿到", "能寄到家里吗", "钱哪天到账啊", "收不收费",
    "备案完多久生效啊", "能领几个月呀？",
])
def test_a_question_without_a_domain_word_asks(text):
    assert asks_clause(text)


@pytest.mark.parametrize("text", ["对吗", "是不是", "行不行", "没错吧", "没有", "杭州的", "张伟"])
def test_a_tag_question_or_a_value_asks_nothing(text):
    assert not asks_clause(text)


def test_a_value_and_a_question_are_told_apart_by_clause():
    assert split("杭州的，备案完多久生效啊") == ("杭州的", "备案完多久生效啊")
    assert split("330102199503080133 这个要多久能拿到卡啊") == (
        "330102199503080133", "这个要多久能拿到卡啊")
    assert split("13800138000 对吗") == ("13800138000，对吗", "")
    assert split("能寄到家里吗") == ("", "能寄到家里吗")


def test_how_to_fill_the_awaited_field_is_about_the_field(catalog):
    start_year = catalog["insurance_record"].field("start_year")
    number = catalog["progress_query"].field("application_no")
    assert asks_about_field(start_year, "我哪年开始交的都记不清了咋填")
    assert asks_about_field(start_year, "这个怎么填")
    assert asks_about_field(number, "编号在哪能看到啊 我忘了")
    assert asks_about_field(number, "这个去哪儿查")
    bank = catalog["card_apply"].field("bank")
    assert asks_about_field(bank, "哪个银行好")
    assert asks_about_field(bank, "这个选哪家")
    # Looking for or choosing something else is a knowledge question, not the field's help.
    assert not asks_about_field(number, "社保卡在哪能办")
    assert not asks_about_field(catalog["medical_filing"].field("filing_type"), "哪个医院能直接结算")
    assert not asks_about_field(start_year, "多久能查到")


@pytest.mark.parametrize("text", [
    "有哪些业务可以办", "你们能干啥", "都能办些什么事", "业务菜单", "能查些什么",
    "还能办点别的啥不", "除了查养老金，还能弄啥", "你们这儿都有啥业务啊？", "帮办都能帮我办哪些",
    "能在线办的有哪些？", "你们有什么功能", "对了你们还能办些啥", "服务列表",
    "有啥能办的", "给我看看菜单", "这能办啥", "还可以办别的吗", "还有其他业务吗", "你都会些啥",
    "我能办哪些业务", "都支持哪些业务",
])
def test_asking_what_can_be_done(text):
    assert asks_for_services(text)


@pytest.mark.parametrize("text", [
    "电子社保卡能做什么", "社保卡有哪些功能", "失业金能领多少", "我能领什么补贴",
    "办社保卡要哪些材料", "退休后能领哪些待遇", "这个收费不", "我要办社保卡",
    "这个能办啥", "钱都会什么时候到账", "医保目录里有哪些药", "还有别的材料吗", "社保卡还能用吗",
])
def test_a_question_about_a_thing_is_no_services_request(text):
    assert not asks_for_services(text)
