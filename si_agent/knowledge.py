"""The channel that answers knowledge questions (``answer_question``).

The core knows only the small ``Knowledge`` protocol below. The
retrieval-backed implementation lives in ``rag/`` (Milvus, the embedded
default), which satisfies it structurally and never imports si_agent; the
core ships ``NoKnowledge``, which knows nothing and says so.
``create_knowledge`` picks one by ``Settings.knowledge``.

``status()`` feeds ``/readyz``: ``{"ok": bool, "state": str, "detail": str}``
with ``state`` one of ``ready``, ``unavailable`` (the store cannot be
reached), ``disabled`` (``milvus`` chosen but the ``rag`` extra is not
installed) or ``not configured`` (``SI_KNOWLEDGE=none``).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

from si_agent.config.settings import KNOWLEDGE_BACKENDS
from si_agent.errors import UnknownBackendError

if TYPE_CHECKING:
    from si_agent.config.settings import Settings

log = logging.getLogger(__name__)


class Answer(Protocol):
    """An answer: the reply text, the titles of its sources, maybe a business to suggest."""

    @property
    def text(self) -> str: ...

    @property
    def sources(self) -> Sequence[str]: ...

    @property
    def suggested_business_id(self) -> str | None: ...


class Knowledge(Protocol):
    """Answers a citizen's question, or returns None when it has nothing relevant.

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
        return {"ok": True, "state": "not configured", "detail": "not configured"}


class DisabledKnowledge(NoKnowledge):
    """``SI_KNOWLEDGE=milvus`` on an install without the ``rag`` extra: knows nothing, says why."""

    def __init__(self, reason: str) -> None:
        self.reason = reason

    def status(self) -> dict:
        return {"ok": False, "state": "disabled", "detail": self.reason}


def create_knowledge(settings: Settings) -> Knowledge:
    """The knowledge channel named by ``settings.knowledge`` (``milvus`` or ``none``).

    With a model configured, answers are written by the model from the retrieved
    passages, citing them; otherwise they are extracted from the passages.
    Without the ``rag`` extra installed, ``milvus`` gives a ``DisabledKnowledge``
    (one warning names the extra); an unknown embedder raises ``UnknownBackendError``.
    """
    if settings.knowledge == "none":
        return NoKnowledge()
    if settings.knowledge != "milvus":
        raise UnknownBackendError("knowledge backend", settings.knowledge, KNOWLEDGE_BACKENDS)
    from rag import build_knowledge
    from rag.errors import MissingDependency, UnknownEmbedder
    from rag.extra import require

    try:
        require()
    except MissingDependency as exc:
        reason = f"{exc} (or set SI_KNOWLEDGE=none to run without one)"
        log.warning("knowledge base disabled: %s", reason)
        return DisabledKnowledge(reason)
    generator = None
    if settings.llm_base_url:
        from si_agent.engine.llm import GroundedAnswerer

        generator = GroundedAnswerer(settings)
    try:
        return build_knowledge(settings, generator=generator)
    except UnknownEmbedder as exc:
        raise UnknownBackendError("embedder", exc.name, exc.valid) from None
