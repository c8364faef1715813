"""Corrections, negation and polarity, played through the controller with the rule engine.

Every correction form in collecting and confirming, for each field type: the value
stored is the one after the frame ("改回张伟" stores 张伟); an option named inside a
negation is not chosen; other-person, hedge and filler statements fill nothing of
the opposite meaning. In hybrid mode such decisions go to the model, plain values
do not.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from si_agent.config.loader import load_businesses
from si_agent.config.settings import Settings
from si_agent.core import actions as T
from si_agent.core.decision import Decision, Rule, ToolCall
from si_agent.engine.llm import HybridEngine
from si_agent.engine.rules import RuleEngine
from si_agent.engine.rules.polarity import blank_negated, clean_calls, clean_value
from si_agent.executor import Executors
from si_agent.flow.controller import Controller
from si_agent.session import MemoryStore

ROOT = Path(__file__).resolve().parents[2]
CARD = "申请社保卡，张伟，330122196303150178，13800138001"
CARD_ALL = f"{CARD}，工行，浙江省杭州市西湖区文三路100号"
TRANSFER_ALL = "社保转移，从杭州转到苏州，身份证330102199503080133，名字刘阳"
_ids = itertools.count()


@pytest.fixture(scope="module")
def catalog():
    return load_businesses(ROOT / "businesses")


@pytest.fixture(scope="module")
def executors(tmp_path_factory):
    with Executors(Settings(business_dir=ROOT / "businesses",
                            data_dir=tmp_path_factory.mktemp("corrections"))) as ex:
        yield ex


def play(catalog, executors, messages, engine=None):
    """The collected fields and the last turn after ``messages``."""
    controller = Controller(catalog, MemoryStore(), engine or RuleEngine(catalog), executors)
    sid = f"s{next(_ids)}"
    for message in messages:
        turn = controller.handle(sid, message)
    session = controller.store.load(sid)
    fields = {k: st.value for k, st in session.fields.items() if st.status == "collected"}
    return fields, turn


# -- corrections: the value after the frame, for the right field --------------------

@pytest.mark.parametrize("messages,key,value", [
    # collecting, the field answered before (name, while the ID is awaited)
    (["申请社保卡 我叫张伟", "哎不对不对 还是改回张炜吧"], "name", "张炜"),
    (["申请社保卡 我叫张伟", "改回张炜"], "name", "张炜"),
    (["申请社保卡 我叫张伟", "张伟是错的 应该是张炜"], "name", "张炜"),
    (["申请社保卡 我叫张伟", "不对，是张炜"], "name", "张炜"),
    (["申请社保卡 我叫张伟", "名字应该是张炜"], "name", "张炜"),
    (["申请社保卡 我叫张伟", "名字说错了，是张炜"], "name", "张炜"),
    (["申请社保卡 我叫张伟", "名字改成张炜"], "name", "张炜"),
    (["申请社保卡 我叫张伟", "名字给错了，是张炜"], "name", "张炜"),
    # enum, phone, ID number
    ([CARD, "工行", "不不，选农行"], "bank", "中国农业银行"),
    ([CARD, "工行", "银行应该是农行"], "bank", "中国农业银行"),
    ([CARD, "工行", "不对，是建行"], "bank", "中国建设银行"),
    (["申请社保卡，张伟，330122196303150178", "13800138001", "手机号给错了，是13911112222"],
     "phone", "13911112222"),
    (["申请社保卡，张伟，330122196303150178", "13800138001", "不对，是13911112222"],
     "phone", "13911112222"),
    (["申请社保卡，张伟", "110105198506150022", "身份证说错了，是330122196303150178"],
     "id_number", "330122196303150178"),
    (["申请社保卡，张伟", "110105198506150022", "不对，应该是330122196303150178"],
     "id_number", "330122196303150178"),
    # city: two city fields, the one answered last is taken back
    (["社保转移，从杭州转到苏州", "不对，转入城市应该是无锡"], "to_city", "无锡市"),
    (["社保转移", "杭州", "苏州", "不对，是无锡"], "to_city", "无锡市"),
    # year and integer: the field answered before, not the one awaited
    (["查参保记录 身份证330122196303150178", "2010", "不对，是2012"], "start_year", 2012),
    (["查参保记录 身份证330122196303150178", "2010年", "开始年份说错了，应该是2012年"],
     "start_year", 2012),
    (["养老金测算", "60", "不对，应该是63"], "retire_age", 63),
    (["养老金测算", "60岁", "退休年龄改成63"], "retire_age", 63),
    (["养老金测算", "60", "25", "不对，是30年"], "contribution_years", 30),
    ([CARD, "工行", "改成农行"], "bank", "中国农业银行"),
    (["个体户参保，赵磊，110105200001100353，13800138006", "本地城镇", "不对，是外地城镇"],
     "hukou_type", "外地城镇户籍"),
    # confirming
    ([CARD_ALL, "不对，是张炜"], "name", "张炜"),
    ([CARD_ALL, "张伟是错的 应该是张炜"], "name", "张炜"),
    ([CARD_ALL, "还是改回张炜吧"], "name", "张炜"),
    ([CARD_ALL, "不不，选建行"], "bank", "中国建设银行"),
    ([CARD_ALL, "手机号给错了，是13911112222"], "phone", "13911112222"),
    ([CARD_ALL, "地址应该是浙江省杭州市上城区解放路8号"], "mailing_address", "浙江省杭州市上城区解放路8号"),
    ([CARD_ALL, "地址改成浙江省杭州市上城区解放路8号"], "mailing_address", "浙江省杭州市上城区解放路8号"),
    ([TRANSFER_ALL, "苏州是错的 应该是无锡"], "to_city", "无锡市"),
    ([TRANSFER_ALL, "刘阳是错的 应该是刘洋"], "name", "刘洋"),
    # "不是X，是Y" with X said before
    (["申请社保卡", "张伟", "不是张伟，是张炜"], "name", "张炜"),
    ([CARD_ALL, "不是张伟，是张炜"], "name", "张炜"),
    ([TRANSFER_ALL, "不是苏州，是无锡"], "to_city", "无锡市"),
    (["社保转移", "杭州", "不是苏州，是无锡"], "to_city", "无锡市"),  # a plain answer
])
def test_a_correction_stores_the_new_value(catalog, executors, messages, key, value):
    fields, turn = play(catalog, executors, messages)
    assert fields[key] == value, turn.reply
    assert not any(isinstance(v, str) and ("改回" in v or "应该" in v or "错" in v)
                   for v in fields.values())


@pytest.mark.parametrize("messages", [
    [CARD_ALL, "不对"], [CARD_ALL, "哦不对"], [CARD_ALL, "先别提交，我再看看"],
])
def test_a_take_back_without_a_value_does_not_submit(catalog, executors, messages):
    fields, turn = play(catalog, executors, messages)
    assert turn.state == "confirming"
    assert fields["name"] == "张伟"


def test_a_correction_at_confirming_stays_confirming(catalog, executors):
    fields, turn = play(catalog, executors, [CARD_ALL, "不对，是张炜"])
    assert turn.state == "confirming"
    assert fields["bank"] == "中国工商银行"


# -- negation: an option inside it is not chosen -----------------------------------

@pytest.mark.parametrize("messages,key,value", [
    ([CARD, "不要工行，要建行"], "bank", "中国建设银行"),
    ([CARD, "工行离我家太远不方便，还是建行吧"], "bank", "中国建设银行"),
    ([CARD, "不要工行"], "bank", None),
    ([CARD, "工行不行，中行吧"], "bank", "中国银行"),  # 行不行 here asks nothing
    ([CARD, "别选工行，农行就行"], "bank", "中国农业银行"),
    # a place turned down: neither stored, nor put in another city field
    (["异地就医备案，身份证310104196806120281，李秀英，参保地上海", "不去杭州了，去南京"],
     "destination_city", "南京市"),
    (["异地就医备案，身份证310104196806120281，李秀英，参保地上海", "杭州不去了，改去南京"],
     "destination_city", "南京市"),
    (["挂失社保卡 身份证110108197809053216 姓名周建华 手机13911112222", "不是临时的"],
     "loss_type", None),
    (["挂失社保卡 身份证110108197809053216 姓名周建华 手机13911112222", "不是临时的，正式挂失"],
     "loss_type", "正式挂失"),
    (["个体户参保，赵磊，110105200001100353，13800138006，本地城镇", "不要最低档"],
     "contribution_grade", None),
    (["个体户参保，赵磊，110105200001100353，13800138006，本地城镇", "不要最低档，按100%来"],
     "contribution_grade", "100%"),
])
def test_a_negated_option_is_not_chosen(catalog, executors, messages, key, value):
    fields, turn = play(catalog, executors, messages)
    assert fields.get(key) == value, turn.reply
    assert fields.get("insured_city") in (None, "上海市")


# -- a consultation's slots ----------------------------------------------------------

FAMILY = ["保险咨询", "35岁 程序员 年收入15万"]


@pytest.mark.parametrize("message,expected", [
    ("哦不对", {}),
    ("哦对了，重疾险跟医疗险有啥区别啊", {}),
    ("家里主要是我先生挣钱，我们有一个女儿", {"is_breadwinner": "否", "children_count": 1}),
    ("我可不是什么顶梁柱，家里靠我老公，还没孩子", {"is_breadwinner": "否", "children_count": 0}),
    ("不是我，家里主要靠老婆", {"is_breadwinner": "否"}),
    ("我说不好算不算经济支柱，我俩挣得差不多", {}),
    ("是的，有一个女儿", {"is_breadwinner": "是", "children_count": 1}),
])
def test_family_slots_keep_their_polarity(catalog, executors, message, expected):
    fields, turn = play(catalog, executors, [*FAMILY, message])
    family = {k: fields[k] for k in ("is_breadwinner", "children_count") if k in fields}
    assert family == expected, turn.reply


def test_an_excluded_product_is_left_out(catalog, executors):
    fields, _ = play(catalog, executors, [*FAMILY, "是的，没孩子", "寿险先不考虑，要重疾和百万医疗"])
    assert fields["product_types"] == ["重疾险", "医疗险"]


# -- the never-store guard and the negation blanking, directly -----------------------

@pytest.mark.parametrize("kind,raw,clean", [
    ("name", "改回张伟", "张伟"), ("name", "张伟", "张伟"), ("name", "不对", None),
    ("phone", "不对，是13911112222", "13911112222"),
    ("text", "应该是浙江省杭州市文三路1号", "浙江省杭州市文三路1号"),
    ("text", "单位说我填错了材料", "单位说我填错了材料"),  # free text keeps its own words
])
def test_clean_value(kind, raw, clean):
    assert clean_value(kind, raw) == clean


def test_clean_calls_drops_what_is_only_a_frame(catalog):
    business = catalog["card_apply"]
    calls = [ToolCall(name=T.PROVIDE_FIELD, arguments={"values": {"name": "还是改回张伟吧"}}),
             ToolCall(name=T.PROVIDE_FIELD, arguments={"values": {"name": "不对不对"}}),
             ToolCall(name=T.MODIFY_INFO, arguments={"field_key": "name", "value": "哦不对"})]
    kept = clean_calls(business, calls)
    assert [c.arguments for c in kept] == [{"values": {"name": "张伟"}}, {"field_key": "name"}]


def test_blank_negated_keeps_positions(catalog):
    business = catalog["card_apply"]
    text = "工行太远，还是建行吧"
    assert blank_negated(business, text) == "  太远，还是建行吧"


# -- hybrid: what reaches the model ------------------------------------------------

class _Model:
    """A model stand-in: records the messages it is asked about, decides nothing."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    def decide(self, view, message, tools, on_text=None) -> Decision:
        self.asked.append(message)
        return Decision(rule=Rule.MODEL, engine="stub")


@pytest.mark.parametrize("messages,reaches", [
    (["申请社保卡 我叫张伟", "哎不对不对 还是改回张炜吧"], True),
    (["申请社保卡 我叫张伟", "不对，是张炜"], True),
    ([CARD, "工行离我家太远不方便，还是建行吧"], True),
    ([CARD, "不要最低档"], True),
    ([*FAMILY, "家里主要是我先生挣钱"], True),
    ([*FAMILY, "哦对了，重疾险跟医疗险有啥区别啊"], True),
    (["申请社保卡 我叫张伟", "330122196303150178"], False),
    ([CARD, "建行"], False),
    ([*FAMILY, "不是，没孩子"], False),
    ([CARD_ALL, "确认"], False),
    # a correction frame cannot leak into a typed number: still sure
    (["修改手机号 身份证330102199503080133 刘洋", "换成我老公那个号吧，13911112222"], False),
])
def test_cued_decisions_reach_the_model(catalog, executors, messages, reaches):
    model = _Model()
    engine = HybridEngine(RuleEngine(catalog), model)  # type: ignore[arg-type]
    play(catalog, executors, messages, engine)
    assert (messages[-1] in model.asked) is reaches


@pytest.mark.parametrize("message,key,value", [
    ("年龄说错了，应该是36", "age", 36),
    ("哦不对，应该是38岁", "age", 38),
])
def test_a_frame_in_a_consultation_answers_no_yes_no_slot(catalog, executors, message, key,
                                                          value):
    """The 是 of "应该是" is no yes to the asked "您是家里的主要经济来源吗"."""
    fields, turn = play(catalog, executors, [*FAMILY, message])
    assert fields[key] == value
    assert "is_breadwinner" not in fields, turn.reply


def test_a_short_yes_word_inside_a_longer_phrase_is_no_answer(catalog, executors):
    fields, turn = play(catalog, executors, [*FAMILY, "我是做设计的"])
    assert "is_breadwinner" not in fields, turn.reply


def test_a_product_refused_in_one_clause_is_left_out_of_all(catalog, executors):
    fields, _ = play(catalog, executors, [*FAMILY, "不是，没孩子", "不要寿险，其他都要"])
    assert fields["product_types"] == ["重疾险", "意外险", "医疗险", "年金险"]


UNEMPLOYMENT = "领失业金，身份证330102199503080133，刘洋，手机13800138001，2026年10月31日离职"


@pytest.mark.parametrize("messages,key", [
    ([UNEMPLOYMENT, "说不好算不算被辞退"], "separation_reason"),
    ([UNEMPLOYMENT, "可能算裁员吧"], "separation_reason"),
    (["挂失社保卡 身份证110108197809053216 姓名周建华 手机13911112222", "临时的吧，我也说不准"],
     "loss_type"),
])
def test_a_hedge_fills_nothing_and_explains(catalog, executors, messages, key):
    fields, turn = play(catalog, executors, messages)
    assert key not in fields
    assert turn.state == "collecting" and turn.awaiting == key
    assert catalog[turn.business.id].field(key).help in turn.reply
