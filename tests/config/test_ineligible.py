"""A field's ineligible answers (issue 25, class 9): schema, meaning checks, the shipped file."""

from __future__ import annotations

from si_agent.config.loader import load_businesses
from si_agent.config.model import FieldDef, Ineligible


def test_an_answer_is_said_by_its_value_or_an_alias_case_and_width_folded():
    item = Ineligible(value="本人主动辞职", aliases=("裸辞", "quit"))
    assert item.said_in("我是裸辞的") and item.said_in("本人主动辞职") and item.said_in("ＱＵＩＴ")
    assert not item.said_in("合同到期")
    field = FieldDef(key="r", label="原因", type="enum", prompt="?", ineligible=(item,))
    assert field.ineligible_in("俺裸辞了") is item and field.ineligible_in("被辞退") is None


def test_the_shipped_reason_field_declares_voluntary_quits(copy):
    reason = load_businesses(copy.dir)["unemployment_benefit"].field("separation_reason")
    assert [i.value for i in reason.ineligible] == ["本人主动辞职"]
    assert "主动辞职一般不能领取" in (reason.help or "")


def test_an_ineligible_answer_needs_a_policy_to_say(copy):
    copy.edit("unemployment_benefit.yaml", "    help: 请按单位出具的解除", "    why: 请按单位出具的解除")
    assert copy.errors() == [
        "unemployment_benefit.yaml:59: fields[4].ineligible[0]: ineligible answer '本人主动辞职' "
        "needs a reply, or the field a help text, to say the policy",
    ]


def test_a_reply_of_its_own_is_checked_like_a_help_text(copy):
    copy.edit("unemployment_benefit.yaml", "      - value: 本人主动辞职\n",
              "      - value: 本人主动辞职\n        reply: 【{business}】{month}不能领取。\n")
    assert copy.errors() == [
        "unemployment_benefit.yaml:60: fields[4].ineligible[0].reply: unknown placeholder "
        "{month}; allowed: {business}, {label}",
    ]


def test_an_ineligible_word_cannot_name_a_real_option(copy):
    copy.edit("unemployment_benefit.yaml", "aliases: [主动辞职, 自己辞职,", "aliases: [主动辞职, 被辞退,")
    errors = copy.errors()
    assert len(errors) == 1 and "fields[4].ineligible[0].aliases[1]" in errors[0]
    assert "'被辞退' names the option '被用人单位辞退'" in errors[0]


def test_the_schema_needs_aliases_and_knows_no_other_key(copy):
    copy.edit("unemployment_benefit.yaml", "      - value: 本人主动辞职\n",
              "      - value: 本人主动辞职\n        when: always\n")
    errors = copy.errors()
    assert len(errors) == 1 and "fields[4].ineligible[0]" in errors[0] and "when" in errors[0]
