"""Phrasings of the held-out blind corpus's failing classes, read by the rules: soft
cancels, services asked in other words, rhetorical denials, one child told by its
age, amounts with the verbs of a premium and a sum insured, the other of two options,
an own option holding another business's keyword, a question about the city asked."""

from __future__ import annotations

import pytest

from si_agent.core.state import FieldStatus
from si_agent.engine import cues
from si_agent.engine import lexicon as L
from si_agent.engine.consult import extract_slots
from si_agent.engine.rules.polarity import other_of_two
from si_agent.engine.rules.questions import asks_about_field
from si_agent.engine.rules.services import asks_for_services
from si_agent.engine.rules.switching import _inside_own_option
from si_agent.session.model import FieldState


@pytest.mark.parametrize(("text", "cancel", "for_good"), [
    ("这个备案先不办了", True, False),
    ("哎我还没问单位呢，这个先放一放吧", True, False),
    ("先搁着吧", True, False),
    ("回头再说吧", True, False),
    ("改天再办", True, False),
    ("这张卡不挂失了", True, True),
    ("档次我还要商量下 先放到这", True, False),  # (the fifth blind corpus's classes, in other words)
    ("不弄咧", True, True),
    ("无爱办了", True, True),
    ("那个数我哪晓得是多少 不查了不查了", True, True),  # a how-clause elsewhere
    ("先不提交了", False, False),  # the confirmation waits
    ("先放到这个袋子里", False, False),
    ("我再说一遍", False, False),
    ("我放心了", False, False),
    ("这个放哪", False, False),
])
def test_soft_cancels(text, cancel, for_good):
    assert L.is_cancel(text) is cancel
    assert L.abandons(text) is for_good


@pytest.mark.parametrize(("text", "asks"), [
    ("你这儿都管哪些事儿啊", True),
    ("你们负责什么业务", True),
    ("还能干点别的不", True),
    ("还能弄点别的吗", True),
    ("你们这儿总共能办些啥", True),
    ("这里还能搞么子别的不", True),
    ("还有麼个好办个", True),
    ("有什么好办法没", False),
    ("医保管哪些病", False),
    ("社保卡有哪些功能", False),
    ("失业金管多久", False),
])
def test_services_asked_in_other_words(text, asks):
    assert asks_for_services(text) is asks


@pytest.mark.parametrize(("text", "plain"), [
    ("我哪算啥顶梁柱啊", "我不算顶梁柱啊"),
    ("他哪是什么经济支柱", "他不算经济支柱"),
    ("我算啥顶梁柱", "我不算顶梁柱"),
    ("哪个是正式挂失", "哪个是正式挂失"),  # asks which one
    ("我算什么时候退休", "我算什么时候退休"),
    ("我哪知道", "我哪知道"),
])
def test_rhetorical_denials_read_plain(text, plain):
    assert cues.plain_negation(text) == plain


@pytest.fixture(scope="module")
def consult(catalog):
    return catalog["insurance_consult"]


def _at(consult, theme: int) -> dict[str, FieldState]:
    values = {"age": 40, "occupation": "教师", "income_range": "10-20万", "is_breadwinner": "是",
              "children_count": 1}
    keys = [s.key for t in consult.themes[:theme] for s in t.slots]
    return {k: FieldState(status=FieldStatus.COLLECTED, value=values[k]) for k in keys}


@pytest.mark.parametrize(("text", "expected"), [
    ("我哪算啥顶梁柱啊，家里我媳妇挣得多，有个女儿", {"is_breadwinner": "否", "children_count": "1"}),
    ("两口子都上班，我挣得多点，娃今年三岁", {"is_breadwinner": "是", "children_count": "1"}),
    ("儿子5岁了", {"children_count": "1"}),
    ("两个孩子，大的五岁", {"children_count": "2"}),  # an alias
])
def test_family_theme(consult, text, expected):
    values = extract_slots(consult, _at(consult, 1), text).values
    assert {k: values.get(k) for k in expected} == expected


def test_a_sum_insured_and_a_premium_by_their_verbs(consult):
    values = extract_slots(consult, _at(consult, 2), "重疾吧，保个三十万，一年顶多掏五千").values
    assert values == {"product_types": "重疾险", "coverage_expectation": "三十万",
                      "premium_budget": "五千"}


def test_an_own_option_holds_another_business_keyword(consult):
    text = "能报看病报销的，再加个储蓄险"
    at = text.index("看病")
    assert _inside_own_option(consult, text, (at, at + 2))
    assert not _inside_own_option(consult, "我要去外地看病", (5, 7))


@pytest.mark.parametrize(("text", "value"), [
    ("正式的先不要，卡估计还能找着", "临时挂失"),
    ("不要临时的，卡肯定找不回来了", "正式挂失"),
    ("不是临时的", None),  # no reason: the choice may follow, it is asked again
    ("正式挂失", None),  # nothing turned down
    ("不要临时的，正式的也不要", None),
])
def test_the_other_of_two_options(catalog, text, value):
    assert other_of_two(catalog["card_loss"].field("loss_type"), text) == value


@pytest.mark.parametrize(("text", "asks"), [
    ("嗯…是不是得先在那边交上才能转啊", True),
    ("转到那边", False),  # no question
    ("杭州那边行吗", False),  # names a city
])
def test_a_question_about_the_city_asked(catalog, text, asks):
    assert asks_about_field(catalog["social_transfer"].field("to_city"), text) is asks


def test_this_thing_points_at_the_field(catalog):
    field = catalog["pension_estimate"].field("contribution_index")
    assert asks_about_field(field, "这玩意儿我上哪看去")


# -- the third blind corpus's first pass ---------------------------------------------------

@pytest.mark.parametrize(("text", "asks"), [
    ("啥保险也没有哇", False),
    ("什么都不知道", False),
    ("啥也没买过", False),
    ("我也没有", False),
    ("你有什么保险", True),
    ("要带啥", True),
    ("审核过没有", True),
])
def test_none_at_all_asks_nothing(text, asks):
    assert L.is_question(text) is asks


@pytest.mark.parametrize(("text", "value"), [
    ("年收入十五六万", 155000.0),
    ("二十七八万", 275000.0),
    ("十五万", 150000.0),
    ("七八万", 75000.0),
])
def test_rough_amounts_with_a_ten(text, value):
    from si_agent.validators.numbers import extract_number
    assert [f.value for f in extract_number(text)][-1] == value


@pytest.mark.parametrize(("text", "act"), [
    ("想做个养老金测算，估一下以后能领多少", "request"),  # a look-up: running it answers
    ("我要办社保卡，要带什么", "question"),  # answered first (答疑优先)
    ("养老金测算怎么算", "question"),
])
def test_a_wish_to_run_a_look_up(catalog, text, act):
    from si_agent.engine.speech_act import classify
    query = "测算" in text
    assert classify(text, text, query=query)[0].value == act


def test_other_services_asked_with_sha():
    assert asks_for_services("提交前问一嘴，你们这儿还有啥别的服务没")
    assert not asks_for_services("社保卡还有啥别的功能吗")


@pytest.mark.parametrize(("business", "key", "text", "asks"), [
    ("card_apply", "bank", "这卡跟银行有啥关系啊，我就想要张社保卡", True),
    ("medical_filing", "start_date", "这个日子是随便写一个就行吗", True),
    ("card_apply", "bank", "工商银行", False),
])
def test_what_a_field_is_for(catalog, business, key, text, asks):
    assert asks_about_field(catalog[business].field(key), text) is asks


def test_cannot_say_it_is_negates(consult):
    values = extract_slots(consult, _at(consult, 1), "说不上是，家里开销大头是我爱人在出，有一个儿子").values
    assert values.get("is_breadwinner") == "否"
