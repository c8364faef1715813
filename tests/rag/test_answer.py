"""Composing answers: extractive text, sources, the generator seam, suggestions, relevance."""

from __future__ import annotations

from rag.answer import MAX_ANSWER_CHARS, compose, suggest_business
from rag.query import DEFAULT_TERMS
from rag.relevance import is_relevant
from rag.terms import load_terms
from rag.store import Hit


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
    assert answer.text == "换城市后社保可以转移。\n【所需材料】· 本人身份证。\n· 社保卡。\n来源：《t指南》"
    assert answer.sources == ["t指南"]
    assert answer.suggested_business_id == "social_transfer"


def test_long_passages_are_trimmed_at_a_sentence_end():
    long = "".join(f"第{i}条规定说明了办理的具体要求。" for i in range(60))
    answer = compose("问题", [hit("t", 0, long)])
    body = answer.text.split("\n来源：")[0]
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
