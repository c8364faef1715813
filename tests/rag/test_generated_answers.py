"""Model-written knowledge answers through the real channel (``create_knowledge``) and a
fake OpenAI-compatible server: personal data masked, citations checked."""

from __future__ import annotations

import re

import pytest

from rag import texts
from si_agent.app import grounded_answerer
from si_agent.config.settings import Settings
from si_agent.knowledge import create_knowledge

QUESTION = "社保转移需要什么材料"


@pytest.fixture
def knowledge(tmp_path, small_corpus, fake):
    settings = Settings(data_dir=tmp_path, kb_dir=small_corpus, embed_model="hashing",
                        llm_base_url=fake.base_url, llm_timeout=5.0, llm_max_retries=0)
    return create_knowledge(settings, answerer=grounded_answerer)  # as the app wires it


def given(fake) -> list[int]:
    """The passage numbers the model was shown in its last request."""
    system = fake.requests[-1]["messages"][0]["content"]
    return [int(n) for n in re.findall(r"^\[(\d+)\] 《", system, flags=re.M)]


def test_personal_data_in_a_model_answer_is_masked(knowledge, fake):
    fake.push({"content": "需要本人身份证或社保卡[1]。您的身份证号330122196303150178、"
                          "手机13812345678和银行卡6222021234567890128已记录[1]。"})
    answer = knowledge.answer(QUESTION)
    assert given(fake), "the model was given passages"
    for raw in ("330122196303150178", "13812345678", "6222021234567890128"):
        assert raw not in answer.text
    assert "3301**********0178" in answer.text and "138****5678" in answer.text
    assert "需要本人身份证或社保卡[1]" in answer.text


def test_a_marker_beyond_the_given_passages_is_refused(knowledge, fake):
    fake.push({"content": "需要本人身份证[1]，还要户口本和单位证明[9]。"})
    answer = knowledge.answer(QUESTION)
    assert 9 not in given(fake) and 1 <= len(given(fake)) < 9
    assert answer.text.startswith(texts.UNSURE)
    assert "户口本" not in answer.text and "来源：《" in answer.text


def test_an_answer_citing_nothing_says_it_is_not_sure(knowledge, fake):
    fake.push({"content": "需要本人身份证，还要户口本。"})
    answer = knowledge.answer(QUESTION)
    assert given(fake)
    assert answer.text.startswith(texts.UNSURE) and "户口本" not in answer.text
    assert "本人身份证或社保卡" in answer.text  # the passage itself, extracted
