"""type: consult in business YAML: located errors for what the schema and the meaning
checks refuse, and the slots read as fields with their theme."""

from __future__ import annotations

import pytest

FILE = "insurance_consult.yaml"


def test_the_shipped_consultation_loads_with_slots_as_fields(copy):
    from si_agent.config.loader import load_businesses

    b = load_businesses(copy.dir)["insurance_consult"]
    assert [t.id for t in b.themes] == [
        "get_policyholder_basic", "get_family_info", "get_insurance_demand",
        "get_existing_insurance", "get_health_info", "get_other_info"]
    assert [f.key for f in b.themes[0].slots] == ["age", "occupation", "income_range"]
    assert b.field("income_range").group == "get_policyholder_basic"
    assert [x.value for x in b.field("income_range").buckets] == [
        "10万以下", "10-20万", "20-50万", "50万以上"]
    assert b.field("product_types").type == "multi_enum" and b.api is None


# (edit, the text on the line the error names, the error): lines are looked up, so
# rewording the shipped YAML does not break these.
@pytest.mark.parametrize("old,new,anchor,error", [
    ("      - key: special_needs\n", "      - key: occupation\n",
     "- key: occupation\n        label: 特别需求",
     "themes[5].slots[0].key: duplicate slot key 'occupation'; first used at themes[0].slots[1]"),
    ("summary: 家庭结构：家庭经济支柱：{is_breadwinner}，", "summary: 家庭结构：家庭经济支柱：{breadwinner}，",
     "summary: 家庭结构",
     "themes[1].summary: unknown placeholder {breadwinner} (did you mean {is_breadwinner}?); "
     "allowed: {children_count}, "
     "{is_breadwinner}"),
    ("{slot: children_count, op: \">\"", "{slot: kids, op: \">\"", "{slot: kids",
     "consult.recommendations[1].when[0].slot: unknown slot 'kids'; slots of this business: "
     "age, occupation, income_range, is_breadwinner, children_count, product_types, "
     "coverage_expectation, premium_budget, existing_insurance, health_summary, special_needs"),
    ("{slot: product_types, op: contains", "{slot: age, op: contains", "{slot: age, op: contains",
     "consult.recommendations[2].when[0].op: contains applies to multi_enum slots, and only "
     "contains does"),
    ("      - key: premium_budget\n", "      - key: premium_budget\n        prompt: 预算多少？\n",
     "        prompt: 预算多少？",
     "themes[2].slots[2].prompt: unknown key 'prompt'; valid keys: aliases, buckets, cues, "
     "date_span, error_msg, example, help, key, label, max, max_length, min, min_length, "
     "not_future, options, type, unit, validate, why"),
    ("          - {value: 10-20万, below: 200000}\n          - {value: 20-50万, below: 500000}\n",
     "          - {value: 20-50万, below: 500000}\n          - {value: 10-20万, below: 200000}\n",
     "        buckets:\n          - {value: 10万以下",
     "themes[0].slots[2].buckets: buckets must be in increasing order of below"),
    ('          "0": [没有孩子,', '          "几个": [没有孩子,', '"几个": [没有孩子',
     "themes[1].slots[1].aliases.几个: '几个' is not a valid integer value for this slot"),
])
def test_a_broken_consultation_is_a_located_error(copy, old, new, anchor, error):
    copy.edit(FILE, old, new)
    text = (copy.dir / FILE).read_text("utf-8")
    assert text.count(anchor) == 1, anchor
    line = text[: text.index(anchor)].count("\n") + 1
    assert copy.errors()[-1:] == [f"{FILE}:{line}: {error}"]


def test_a_consultation_takes_no_api_and_other_types_need_one(copy):
    copy.edit(FILE, "type: consult\n", "type: consult\napi: {kind: http, url: http://x, "
                                       "result_template: x}\n")
    copy.edit("card_loss.yaml", "api:\n", "old_api:\n")
    errors = copy.errors()
    assert any(e.startswith("card_loss.yaml:") and "missing required key 'api'" in e
               for e in errors), errors
    assert "insurance_consult.yaml:11: api: api does not apply to a consult business " \
           "(its values are the slots of its themes)" in errors


def test_themes_need_type_consult(copy):
    copy.edit(FILE, "type: consult\n", "type: query\n")
    errors = copy.errors()
    assert any("missing required key 'api'" in e for e in errors), errors


def test_bucket_and_several_choice_fields_serve_any_business(copy, tmp_path):
    """A query business with a bucket and a multi_enum field: validated at load, and
    the rule engine reads them in a sentence."""
    from si_agent.config.loader import load_businesses
    from si_agent.config.settings import Settings
    from si_agent.engine.rules import RuleEngine
    from si_agent.executor import Executors
    from si_agent.flow.controller import Controller
    from si_agent.session import MemoryStore

    copy.edit("pension_query.yaml", "fields:\n", """fields:
  - key: income
    label: 年收入
    type: bucket
    prompt: 您的年收入大概多少？
    error_msg: 请说一个大概的金额。
    buckets: [{value: 低, below: 100000}, {value: 高}]
  - key: kinds
    label: 险种
    type: multi_enum
    prompt: 您想查哪些险种？
    error_msg: 请从养老、医疗中选择。
    options: [{value: 养老}, {value: 医疗}]
""")
    catalog = load_businesses(copy.dir)
    controller = Controller(catalog, MemoryStore(), RuleEngine(catalog),
                            Executors(Settings(business_dir=copy.dir, data_dir=tmp_path)))
    turn = controller.handle("u", "查养老金")
    assert turn.business.id == "pension_query"
    turn = controller.handle("u", "年收入不到10万")
    assert {f.key: f.value for f in turn.fields}["income"] == "低"
    turn = controller.handle("u", "养老和医疗")
    assert {f.key: f.value for f in turn.fields}["kinds"] == "养老、医疗"


def test_a_bucket_field_needs_its_buckets(copy):
    copy.edit("pension_query.yaml", "fields:\n", """fields:
  - key: income
    label: 年收入
    type: bucket
    prompt: 您的年收入大概多少？
""")
    assert "pension_query.yaml:8: fields[0].buckets: a bucket field needs buckets" in copy.errors()
