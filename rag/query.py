"""Query understanding: what a question means before it is searched for.

    question ─ normalise.py (term table, then homophones) ─ expansion.py (business words) ─ Query

``Query.text`` is the question with typos and dialect put right ("失叶金咋领" →
"失业金怎么领"): it is embedded, and the relevance gate and the answer read it.
``Query.added`` is the expansion (business names, main words of synonyms): BM25
searches with it too (``Query.search_text``). Each step can be switched off, for measuring what it brings
(``scripts/bench_rag.py``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from rag.expansion import BusinessTerms, QueryExpander
from rag.normalise import Correction, Normaliser
from rag.terms import TERMS_FILE, TermTable, load_terms

# The shipped term table: used when a knowledge directory brings none of its own.
DEFAULT_TERMS = Path(__file__).resolve().parent / "knowledge" / TERMS_FILE


@dataclass(frozen=True)
class Query:
    """A question as understood: normalised text, words added, businesses it names."""

    original: str
    text: str
    added: tuple[str, ...] = ()
    businesses: tuple[str, ...] = ()
    corrections: tuple[Correction, ...] = ()

    @property
    def search_text(self) -> str:
        return " ".join((self.text, *self.added))


class QueryUnderstanding:
    """Normalises and expands questions; ``table`` also gives the domain words."""

    def __init__(self, table: TermTable | None = None, businesses: Iterable[BusinessTerms] = (),
                 *, vocabulary: Iterable[str] = (), corrections: bool = True,
                 pinyin: bool = True, expand: bool = True) -> None:
        self.table = table or TermTable()
        self.expander = QueryExpander(businesses if expand else ())
        used = self.table if corrections else TermTable(domain=self.table.domain)
        self.normaliser = Normaliser(used, [*self.expander.vocabulary, *vocabulary],
                                     pinyin=pinyin)

    @property
    def domain(self) -> tuple[str, ...]:
        return self.table.domain

    @property
    def refuse(self) -> tuple[str, ...]:
        return self.table.refuse

    def understand(self, question: str, *, context: str | None = None) -> Query:
        """``context``: what the dialogue is about (the business being done, "社保卡申领").
        A question that names no business itself ("这个收费不", "多久能拿到") is
        read as about it: the context leads the text searched and read."""
        normalised = self.normaliser.normalise(question)
        expansion = self.expander.expand(normalised.text)
        text = normalised.text
        if context and not expansion.businesses and context not in text:
            text = f"{context} {text}"
            expansion = self.expander.expand(text)
        return Query(original=question, text=text, added=expansion.added,
                     businesses=expansion.businesses, corrections=normalised.corrections)


def terms_path(kb_dir: Path | None) -> Path:
    """The term table of a knowledge directory, or the shipped one if it has none."""
    if kb_dir is not None and (Path(kb_dir) / TERMS_FILE).is_file():
        return Path(kb_dir) / TERMS_FILE
    return DEFAULT_TERMS


def understanding_for(kb_dir: Path | None, businesses: Iterable[BusinessTerms] = (),
                      vocabulary: Iterable[str] = ()) -> QueryUnderstanding:
    """Query understanding with the knowledge directory's term table; raises ``TermsError``."""
    return QueryUnderstanding(load_terms(terms_path(kb_dir)), businesses, vocabulary=vocabulary)
