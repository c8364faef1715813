"""``CuratedKnowledge``: a knowledge channel that answers from the curated answers first.

It wraps the deployment's channel (the RAG knowledge base, or none at all) and keeps
its protocol (``si_agent.knowledge.Knowledge``, and ``ExplainingKnowledge`` for the
console's hit testing), so every caller of ``controller.knowledge`` — the talk handler
for the rule engine and the model engine's ``answer_question``, the citizen page, the
hit testing — gets the same answer:

- ``answer``: a question a curated answer matches (``CuratedBook.match``) gets it, with
  "来源：《source》（2025年6月）", its one business suggested (if it names exactly
  one), and one more hit counted; any other goes to the wrapped channel;
- ``read`` (hit testing): the wrapped channel's reading as it is, every step shown,
  with the curated answer in place of its answer (``CuratedReading.curated`` says which
  and how); ``read`` counts no hit, nor does ``answer`` inside ``not_counting()`` (the
  hit testing's sandbox turn).

A curated store that fails is logged and the question goes to the wrapped channel:
the citizen still gets an answer.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, fields
from typing import Any

from rag.answer import Answer
from rag.knowledge_base import Reading
from si_agent.curated import texts
from si_agent.curated.book import CuratedBook
from si_agent.curated.matching import Match
from si_agent.curated.model import CuratedAnswer
from si_agent.errors import StoreUnavailable

log = logging.getLogger(__name__)

_COUNTING: ContextVar[bool] = ContextVar("si_curated_counting", default=True)


@contextmanager
def not_counting() -> Iterator[None]:
    """Answers given inside count no hit (staff testing, not a citizen asking)."""
    token = _COUNTING.set(False)
    try:
        yield
    finally:
        _COUNTING.reset(token)


@dataclass(frozen=True)
class CuratedReading(Reading):
    """A ``Reading`` whose answer may be a curated one (``curated``: which, and how)."""

    curated: Match | None = None


def as_answer(curated: CuratedAnswer) -> Answer:
    """The knowledge channel's answer for a curated answer: its text and source line."""
    return Answer(text=f"{curated.answer}\n{source_line(curated)}", sources=[curated.source],
                  suggested_business_id=curated.businesses[0] if len(curated.businesses) == 1
                  else None)


def source_line(curated: CuratedAnswer) -> str:
    year, month, *day = curated.as_of.split("-")
    date = (texts.DATE_DAY.format(year=year, month=int(month), day=int(day[0])) if day
            else texts.DATE_MONTH.format(year=year, month=int(month)))
    return texts.SOURCE.format(source=curated.source, date=date)


class CuratedKnowledge:
    """The curated answers of ``book`` in front of the channel ``inner``."""

    def __init__(self, inner: Any, book: CuratedBook) -> None:
        self.inner = inner
        self.book = book

    def answer(self, question: str, *, generate: bool = True,
               context: str | None = None) -> Any:
        found = self._match(question)
        if found is None:
            return self.inner.answer(question, generate=generate, context=context)
        if _COUNTING.get():
            try:
                self.book.count_hit(found.answer)
            except StoreUnavailable as exc:
                log.warning("curated answer hit not counted: %s", exc)
        log.info("answered from curated answer %s (%s)", found.answer.id, found.how)
        return as_answer(found.answer)

    def read(self, question: str, *, generate: bool = True,
             context: str | None = None) -> CuratedReading:
        if callable(getattr(self.inner, "read", None)):
            reading = self.inner.read(question, generate=generate, context=context)
        else:  # no knowledge base: only the curated answers
            reading = Reading((question or "").strip(),
                              unavailable=self.inner.status().get("detail") or "no knowledge base")
        found = self._match(question)
        kept = {f.name: getattr(reading, f.name) for f in fields(Reading)}
        if found is not None:
            kept["answer"] = as_answer(found.answer)
        return CuratedReading(**kept, curated=found)

    def search_query(self, query: Any, k: int = 5, *, mode: str | None = None) -> Any:
        return self.inner.search_query(query, k, mode=mode)

    def status(self) -> dict:
        return self.inner.status()

    def knows_nothing(self) -> bool:
        """No knowledge base behind and no enabled curated answer (``si_agent.knowledge``)."""
        from si_agent.knowledge import knows_nothing

        if not knows_nothing(self.inner):
            return False
        try:
            return self.book.empty()
        except StoreUnavailable:
            return False

    def prepare(self) -> None:
        prepare = getattr(self.inner, "prepare", None)
        if prepare is not None:  # a channel without it opens on the first question
            prepare()

    def _match(self, question: str) -> Match | None:
        try:
            return self.book.match(question or "")
        except StoreUnavailable as exc:
            log.warning("curated answers unavailable, answering from the knowledge base: %s",
                        exc)
            return None
