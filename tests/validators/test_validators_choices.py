"""Enum fields: choosing one of a fixed list."""

from __future__ import annotations

import pytest

from si_agent.validators import check, extract

LOSS = [("临时挂失", ("临挂", "暂时挂失")), ("正式挂失", ("正挂",)), ("解除挂失", ("解挂",))]
BANKS = [("中国银行", ("中行", "BOC")), ("建设银行", ("建行", "CCB")), ("银行", ())]


@pytest.mark.parametrize("raw,value", [
    ("临时挂失", "临时挂失"), ("临挂", "临时挂失"), ("暂时挂失", "临时挂失"),
    ("解挂", "解除挂失"), (" 正式挂失 ", "正式挂失"),
])
def test_exact_value_or_alias(raw, value):
    assert check("enum", raw, options=LOSS).value == value


def test_case_insensitive_and_full_width():
    assert check("enum", "boc", options=BANKS).value == "中国银行"
    assert check("enum", "ＣＣＢ", options=BANKS).value == "建设银行"


@pytest.mark.parametrize("raw,value", [
    ("我要办临时挂失", "临时挂失"), ("帮我解挂吧", "解除挂失"),
    ("我要去中国银行", "中国银行"),  # "银行" inside "中国银行" does not count
    ("随便一家银行", "银行"),
])
def test_containment(raw, value):
    options = LOSS if "挂" in raw else BANKS
    assert check("enum", raw, options=options).value == value


@pytest.mark.parametrize("raw,value", [("临时", "临时挂失"), ("正式", "正式挂失"), ("解除", "解除挂失")])
def test_part_of_exactly_one_option(raw, value):
    assert check("enum", raw, options=LOSS).value == value


def test_characters_in_order():
    assert check("enum", "正失", options=LOSS).value == "正式挂失"


def test_ambiguous_answer_lists_the_candidates():
    result = check("enum", "挂失", options=LOSS)
    assert result.error == "可能是多个选项中的一个，请从以下选项中选择：临时挂失、正式挂失、解除挂失。"
    result = check("enum", "中行还是建行", options=BANKS)
    assert result.error == "可能是多个选项中的一个，请从以下选项中选择：中国银行、建设银行。"


def test_no_match_lists_every_option():
    result = check("enum", "补卡", options=LOSS)
    assert result.error == "没有这个选项，请从以下选项中选择：临时挂失、正式挂失、解除挂失。"


def test_single_characters_are_not_guessed():
    assert not check("enum", "临", options=LOSS).ok


def test_options_as_plain_strings_and_lists():
    assert check("enum", "男", options=["男", "女"]).value == "男"
    assert check("enum", "女性", options=[["女", ["女性"]], ["男", ["男性"]]]).value == "女"


def test_missing_options_is_a_definition_error():
    with pytest.raises(ValueError):
        check("enum", "男")


def test_extract_longest_first_non_overlapping():
    found = extract("enum", "中国银行和建行，还有别的银行", options=BANKS)
    assert [(f.value, f.raw, f.start) for f in found] == [
        ("中国银行", "中国银行", 0), ("建设银行", "建行", 5), ("银行", "银行", 12),
    ]


def test_extract_keeps_spans_on_the_original_text():
    text = "办理ＢＯＣ的卡"
    (found,) = extract("enum", text, options=BANKS)
    assert found.value == "中国银行" and found.raw == "ＢＯＣ" == text[found.start:found.end]
