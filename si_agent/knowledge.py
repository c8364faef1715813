"""The channel that answers knowledge questions (``answer_question``).

The retrieval-backed implementation lives in ``rag/`` (Milvus, the embedded
default); the core ships ``NoKnowledge``, which knows nothing and says so.
``create_knowledge`` picks one by ``Settings.knowledge``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from pydantic import BaseModel, Field

from si_agent.config.settings import KNOWLEDGE_BACKENDS
from si_agent.errors import UnknownBackendError

if TYPE_CHECKING:
    from si_agent.config.settings import Settings


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


def create_knowledge(settings: Settings) -> Knowledge:
    """The knowledge channel named by ``settings.knowledge`` (``milvus`` or ``none``).

    With a model configured, answers are written by the model from the retrieved
    passages, citing them; otherwise they are extracted from the passages.
    """
    if settings.knowledge == "none":
        return NoKnowledge()
    if settings.knowledge != "milvus":
        raise UnknownBackendError("knowledge backend", settings.knowledge, KNOWLEDGE_BACKENDS)
    from rag import build_knowledge

    generator = None
    if settings.llm_base_url:
        from si_agent.engine.llm import GroundedAnswerer

        generator = GroundedAnswerer(settings)
    return build_knowledge(settings, generator=generator)
