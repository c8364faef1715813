"""Curated answers: staff-written answers to questions citizens ask, that win over retrieval.

    model.py      ``CuratedAnswer`` (question, paraphrases, answer, source, as-of date,
                  businesses, author, times, hits, enabled, version) and ``Draft``
    store.py      the ``CuratedStore`` protocol and ``create_curated_store`` (the session
                  store's family: memory, SQLite on one machine, Redis for many)
    memory.py, sqlite.py, redis.py   the three stores
    matching.py   question keys (the knowledge channel's normalisation, fillers,
                  Traditional → Simplified) and the ``Matcher`` (exact, then guarded fuzzy)
    book.py       ``CuratedBook``: the store plus the matcher, with the checks staff edits
                  pass (unique questions, known businesses)
    knowledge.py  ``CuratedKnowledge``: a knowledge channel that answers from the book
                  first and asks the channel it wraps otherwise
    sheet.py      a 常见问题 spreadsheet (.xlsx or .csv) read into drafts, every bad row
                  reported by its number
    texts.py      the Chinese the answers and the import say

The controller's knowledge channel is a ``CuratedKnowledge`` (``si_agent.app``), so the
citizen page, both engines and the console's hit testing see the same answers.
"""

from __future__ import annotations

from si_agent.curated.book import CuratedBook, DuplicateQuestion
from si_agent.curated.knowledge import CuratedKnowledge, CuratedReading, not_counting
from si_agent.curated.matching import Match, Matcher
from si_agent.curated.model import CuratedAnswer, Draft
from si_agent.curated.store import CuratedStore, create_curated_store

__all__ = ["CuratedAnswer", "CuratedBook", "CuratedKnowledge", "CuratedReading",
           "CuratedStore", "Draft", "DuplicateQuestion", "Match", "Matcher",
           "create_curated_store", "not_counting"]
