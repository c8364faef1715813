"""The channel that answers knowledge questions (``answer_question``).

The retrieval-backed implementation lives in ``rag/``; the core ships
``NoKnowledge``, which knows nothing and says so.
"""

from __future__ import annotations

from typing import Protocol

from pydantic import BaseModel, Field


class Answer(BaseModel):
    text: str
    sources: list[str] = Field(default_factory=list)
    suggested_business_id: str | None = None


class Knowledge(Protocol):
    """Answers a citizen's question, or returns None when it has nothing relevant."""

    def answer(self, question: str) -> Answer | None: ...


class NoKnowledge:
    """The knowledge channel used when no knowledge base is configured."""

    def answer(self, question: str) -> Answer | None:
        return None
