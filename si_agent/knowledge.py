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
    """Answers a citizen's question, or returns None when it has nothing relevant.

    ``status()`` reports readiness for ``/readyz``: ``{"ok": bool, "detail": str}``.
    An implementation that cannot reach its store answers with an apology
    rather than raising: business dialogues must keep working.
    """

    def answer(self, question: str) -> Answer | None: ...

    def status(self) -> dict: ...


class NoKnowledge:
    """The knowledge channel used when no knowledge base is configured."""

    def answer(self, question: str) -> Answer | None:
        return None

    def status(self) -> dict:
        return {"ok": True, "detail": "not configured"}
