"""The homophone pass on a long, repetitive question: each run judged once, cuts found fast."""

from __future__ import annotations

import pytest

import rag.normalise as normalise
from rag.query import DEFAULT_TERMS, QueryUnderstanding
from rag.terms import load_terms
from si_agent.config.loader import load_businesses
from si_agent.knowledge import business_terms

from .conftest import ROOT

pytest.importorskip("pypinyin")
pytest.importorskip("jieba")

LIMIT = 2000  # the API's max_message_chars


@pytest.fixture(scope="module")
def understanding() -> QueryUnderstanding:
    catalog = load_businesses(ROOT / "businesses")
    return QueryUnderstanding(load_terms(DEFAULT_TERMS), business_terms(catalog))


@pytest.fixture
def judged(monkeypatch, understanding):
    """How many runs the homophone pass compares with a domain word's sound."""
    understanding.understand("失叶金咋领")  # loads pypinyin, jieba and the index
    calls = [0]
    real = normalise._sounds_like

    def counting(*args):
        calls[0] += 1
        return real(*args)

    monkeypatch.setattr(normalise, "_sounds_like", counting)
    if hasattr(normalise, "_typo_of"):
        normalise._typo_of.cache_clear()
    return calls


@pytest.mark.parametrize("typo, word", [("失叶金", "失业金"), ("医报", "医保")])
def test_a_repeated_typo_is_judged_once_and_put_right_everywhere(understanding, judged,
                                                                  typo, word):
    n = LIMIT // len(typo)
    query = understanding.understand(typo * n)
    assert query.text == word * n
    assert len(query.corrections) == n
    assert judged[0] <= 50  # distinct runs, not one judgement per position


def test_clean_cut_finds_the_tokens_around_a_run():
    # "他是业主": "是业" would cut through 业主.
    tokens = normalise._tokens("他是业主" * 500)
    assert not normalise._clean_cut(1, 3, tokens)
    assert normalise._clean_cut(2, 4, tokens)
    assert not normalise._clean_cut(1997, 1999, tokens)
