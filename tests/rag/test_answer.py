"""Composing answers: extractive text, sources, the generator seam, suggestions, relevance."""

from __future__ import annotations

from rag import texts
from rag.answer import MAX_ANSWER_CHARS, compose, suggest_business
from rag.query import DEFAULT_TERMS
from rag.relevance import is_relevant
from rag.store import Hit
from rag.terms import load_terms


def hit(doc, n, text, *, businesses=(), cosine=0.9, heading="", title=None) -> Hit:
    return Hit(chunk_id=f"{doc}#{n:03d}", doc_id=doc, title=title or f"{doc}指南", heading=heading,
               text=text, businesses=tuple(businesses), score=1.0 / (n + 1), cosine=cosine)


def test_extractive_answer_has_passages_in_document_order_and_the_source():
    hits = [
        hit("t", 2, "- 本人身份证。\n- **社保卡**。", heading="所需材料", cosine=0.93,
            businesses=["social_transfer"]),
        hit("t", 0, "换城市后社保可以转移。", cosine=0.91, businesses=["social_transfer"]),
        hit("other", 0, "无关内容。", cosine=0.92),
    ]
    answer = compose("社保转移要什么材料", hits)
    # The lead sentence is not said again in the passages; a heading has a line of its own.
    assert answer.text == "换城市后社保可以转移。\n【所需材料】\n· 本人身份证。\n· 社保卡。\n来源：《t指南》"
    assert answer.sources == ["t指南"]
    assert answer.suggested_business_id == "social_transfer"


def test_the_sentences_that_answer_come_first_with_the_dated_source():
    text = ("领取期限根据失业前累计缴费时间确定。累计缴费满1年不满5年的，最长领取12个月；"
            "满5年不满10年的，最长领取18个月；满10年以上的，最长领取24个月。"
            "重新就业后再次失业的，缴费时间重新计算。领取失业保险金期间不缴纳基本养老保险费。"
            "有下列情形之一的，停止领取失业保险金：重新就业的；应征服兵役的；移居境外的。")
    hits = [hit("amount", 1, text, heading="能领多长时间", businesses=["unemployment_benefit"]),
            hit("other", 0, "失业登记可以在线上办理。")]
    answer = compose("交了7年失业保险能领几个月失业金", hits, as_of={"amount": "2025-06"})
    lead, heading, body, source = answer.text.split("\n")
    assert "满5年不满10年的，最长领取18个月" in lead
    assert len(lead) <= 160
    assert heading == "【能领多长时间】"
    assert body.startswith("领取期限根据")
    assert "满5年不满10年的，最长领取18个月" not in body  # the lead is not said twice
    assert source == "来源：《amount指南》（2025年6月）"


def test_a_short_passage_that_is_the_answer_is_not_repeated():
    hits = [hit("card", 0, "社保卡丢失后应当尽快挂失，可以拨打12333电话挂失。", businesses=["card_loss"])]
    answer = compose("社保卡丢了怎么挂失", hits)
    assert answer.text == "社保卡丢失后应当尽快挂失，可以拨打12333电话挂失。\n来源：《card指南》"


def test_long_passages_are_trimmed_at_a_sentence_end():
    long = "".join(f"第{i}条规定说明了办理的具体要求。" for i in range(60))
    answer = compose("问题", [hit("t", 0, long)])
    body = answer.text.split("\n来源：")[0].split("\n")[-1]
    assert len(body) <= MAX_ANSWER_CHARS + 2
    assert body.endswith("。……")


def test_generator_answers_with_numbered_sources():
    seen = {}

    def generator(question, passages):
        seen["question"] = question
        seen["numbers"] = [(p.number, p.title) for p in passages]
        return "需要身份证[1]，可以线上办理[2]。"

    hits = [hit("a", 0, "甲。", businesses=["card_loss"]), hit("b", 0, "乙。")]
    answer = compose("怎么办", hits, generator=generator)
    assert seen == {"question": "怎么办", "numbers": [(1, "a指南"), (2, "b指南")]}
    assert answer.text == "需要身份证[1]，可以线上办理[2]。\n来源：[1]《a指南》 [2]《b指南》"
    assert answer.sources == ["a指南", "b指南"]


def test_a_generated_answer_that_cites_nothing_is_not_used_and_the_answer_is_unsure():
    answer = compose("社保卡丢了怎么办", [hit("a", 0, "社保卡丢了要尽快挂失。")],
                     generator=lambda q, p: "社保卡丢了要尽快挂失，还要报警。")
    assert answer.text == f"{texts.UNSURE}\n社保卡丢了要尽快挂失。\n来源：《a指南》"
    assert "不能完全确定" in texts.UNSURE


def test_a_marker_naming_a_passage_that_was_not_given_fails_grounding():
    hits = [hit("a", 0, "甲。"), hit("b", 0, "乙。"), hit("c", 0, "丙。")]
    for made_up in ("需要身份证[1]，还要户口本[9]。", "需要身份证[0]。", "需要身份证【4】。",
                    "需要身份证[1-5]。", "需要身份证[2, 12]。", f"{texts.NOT_FOUND}[7]。"):
        answer = compose("怎么办", hits, generator=lambda q, p, t=made_up: t)
        assert answer.text.startswith(f"{texts.UNSURE}\n"), made_up
        assert "户口本" not in answer.text and "[9]" not in answer.text


def test_every_marker_form_naming_given_passages_is_grounded():
    hits = [hit("a", 0, "甲。"), hit("b", 0, "乙。"), hit("c", 0, "丙。")]
    for cited in ("甲[1]。", "甲［2］。", "甲【3】。", "甲[1,2]。", "甲[1、3]。", "甲[1-3]。"):
        answer = compose("怎么办", hits, generator=lambda q, p, t=cited: t)
        assert answer.text.startswith(cited), cited


def test_the_model_saying_the_passages_do_not_answer_means_no_answer():
    answer = compose("社保卡能当公交卡吗", [hit("a", 0, "社保卡丢了要尽快挂失。")],
                     generator=lambda q, p: f"{texts.NOT_FOUND}。")
    assert answer is None


def test_a_failing_generator_falls_back_to_the_extractive_answer():
    def broken(question, passages):
        raise TimeoutError("model down")

    answer = compose("怎么办", [hit("a", 0, "甲。")], generator=broken)
    assert answer.text == "甲。\n来源：《a指南》"


def test_suggestion_needs_the_top_documents_to_agree():
    a = ["card_loss"]
    assert suggest_business([hit("x", 0, "", businesses=a), hit("y", 0, "", businesses=a)]) == "card_loss"
    # General document on top: no suggestion.
    assert suggest_business([hit("g", 0, ""), hit("x", 0, "", businesses=a)]) is None
    # The top one alone against two others that disagree: 1 vs 1/2 + 1/3.
    split = [hit("x", 0, "", businesses=a), hit("y", 0, "", businesses=["social_transfer"]),
             hit("z", 0, "", businesses=["social_transfer"])]
    assert suggest_business(split) == "card_loss"
    # A top document with two tags splits its vote: below half of the weight.
    two = [hit("x", 0, "", businesses=["card_loss", "card_apply"]), hit("g", 0, ""), hit("h", 0, "")]
    assert suggest_business(two) is None
    assert suggest_business([]) is None


def test_relevance_needs_a_domain_word_and_the_cosine_floor():
    domain = load_terms(DEFAULT_TERMS).domain
    close = [hit("x", 0, "", cosine=0.9)]
    assert is_relevant("社保卡丢了怎么办", close, floor=0.87, domain=domain)
    assert not is_relevant("社保卡丢了怎么办", [hit("x", 0, "", cosine=0.8)], floor=0.87,
                           domain=domain)
    assert not is_relevant("今天天气怎么样", close, floor=0.87, domain=domain)
    assert not is_relevant("身份证丢了怎么补办", close, floor=0.87, domain=domain)
    assert not is_relevant("社保卡丢了怎么办", [], floor=0.87, domain=domain)
