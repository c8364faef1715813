"""The channel that answers knowledge questions (``answer_question``).

The core knows only the small ``Knowledge`` protocol below. The
retrieval-backed implementation lives in ``rag/`` (Milvus, the embedded
default), which satisfies it structurally and never imports si_agent; the
core ships ``NoKnowledge``, which knows nothing and says so.
``create_knowledge`` picks one by ``Settings.knowledge``.

``status()`` feeds ``/readyz``: ``{"ok": bool, "state": str, "detail": str}``
with ``state`` one of ``ready``, ``building`` (being opened or built in the
background: an implementation may have ``prepare()``, which starts that and
returns at once; ``si-agent serve`` calls it), ``unavailable`` (the store cannot be
reached), ``locked`` (another process has the Milvus Lite directory open), ``disabled`` (``milvus`` chosen but the ``rag`` extra is not
installed) or ``not configured`` (``SI_KNOWLEDGE=none``).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from si_agent.config.settings import KNOWLEDGE_BACKENDS
from si_agent.errors import ConfigError, UnknownBackendError
from si_agent.privacy import redact_text

if TYPE_CHECKING:
    from rag import BusinessTerms
    from si_agent.config.model import Business
    from si_agent.config.settings import Settings

log = logging.getLogger(__name__)


class Answer(Protocol):
    """An answer: the reply text, the titles of its sources, maybe a business to suggest.

    ``refused`` marks a question the channel will not answer (instructions to the
    assistant, someone else's personal data): the text says so politely, and no
    business is recommended.
    """

    @property
    def text(self) -> str: ...

    @property
    def sources(self) -> Sequence[str]: ...

    @property
    def suggested_business_id(self) -> str | None: ...

    @property
    def refused(self) -> bool: ...


class Knowledge(Protocol):
    """Answers a citizen's question, or returns None when it has nothing relevant.

    An implementation that cannot reach its store answers with an apology
    rather than raising: business dialogues must keep working.
    """

    def answer(self, question: str, *, generate: bool = True,
               context: str | None = None) -> Answer | None:
        """``generate=False``: no model writes the answer (it is extractive).
        ``context``: what the dialogue is about (the name of the business being done);
        a question that names nothing itself ("这个收费不") is answered as about it."""
        ...

    def status(self) -> dict: ...


@runtime_checkable
class ExplainingKnowledge(Knowledge, Protocol):
    """A channel that also shows how it answers, step by step (the staff console's hit
    testing): ``read`` returns ``rag.knowledge_base.Reading``, whose ``answer`` is
    exactly what ``answer`` gives; ``search_query`` ranks an understood question in
    one search mode (``rag.store.MODES``)."""

    def read(self, question: str, *, generate: bool = True,
             context: str | None = None) -> Any: ...

    def search_query(self, query: Any, k: int = 5, *, mode: str | None = None) -> Any: ...


class NoKnowledge:
    """The knowledge channel used when no knowledge base is configured."""

    def knows_nothing(self) -> bool:
        return True

    def answer(self, question: str, *, generate: bool = True,
               context: str | None = None) -> Answer | None:
        return None

    def status(self) -> dict:
        return {"ok": True, "state": "not configured", "detail": "not configured"}


def knows_nothing(knowledge: Knowledge) -> bool:
    """Whether a channel can answer nothing at all (no knowledge base, no curated
    answers): a model engine's own text is the answer then. A channel says so with a
    ``knows_nothing()`` method (``NoKnowledge``, ``si_agent.curated.CuratedKnowledge``);
    one without it knows something."""
    check = getattr(knowledge, "knows_nothing", None)
    return bool(check()) if callable(check) else False


def behind(knowledge: Knowledge) -> Knowledge:
    """The channel a wrapping channel stands in front of (``CuratedKnowledge.inner``:
    the knowledge base behind the curated answers), else the channel itself."""
    return getattr(knowledge, "inner", knowledge)


class DisabledKnowledge(NoKnowledge):
    """``SI_KNOWLEDGE=milvus`` on an install without the ``rag`` extra: knows nothing, says why."""

    def __init__(self, reason: str) -> None:
        self.reason = reason

    def status(self) -> dict:
        return {"ok": False, "state": "disabled", "detail": self.reason}


def create_knowledge(
    settings: Settings,
    catalog: Mapping[str, Business] | None = None,
    answerer: Callable[[Settings], Callable[[str, Sequence], str]] | None = None,
) -> Knowledge:
    """The knowledge channel named by ``settings.knowledge`` (``milvus`` or ``none``).

    With a model configured (``settings.llm_base_url``) and an ``answerer`` given
    (what builds the model's answer writer from the settings; the assembly passes
    ``si_agent.engine.llm.GroundedAnswerer``, because the engines sit above this
    module), answers are written by the model from the retrieved passages, citing
    them, with personal data masked (``RedactedGenerator``); otherwise they are
    extracted from the passages.
    The businesses of ``catalog`` lend their words to query expansion
    (``business_terms``). Without the ``rag`` extra installed, ``milvus`` gives a
    ``DisabledKnowledge`` (one warning names the extra); an unknown embedder
    raises ``UnknownBackendError``, a broken term table ``ConfigError``.
    """
    if settings.knowledge == "none":
        return NoKnowledge()
    if settings.knowledge != "milvus":
        raise UnknownBackendError("knowledge backend", settings.knowledge, KNOWLEDGE_BACKENDS)
    from rag import build_knowledge
    from rag.errors import MissingDependency, TermsError, UnknownEmbedder
    from rag.extra import require

    try:
        require()
    except MissingDependency as exc:
        reason = f"{exc} (or set SI_KNOWLEDGE=none to run without one)"
        log.warning("knowledge base disabled: %s", reason)
        return DisabledKnowledge(reason)
    generator = None
    if settings.llm_base_url and answerer is not None:
        generator = RedactedGenerator(answerer(settings))
    try:
        return build_knowledge(settings, generator=generator,
                               businesses=business_terms(catalog or {}))
    except UnknownEmbedder as exc:
        raise UnknownBackendError("embedder", exc.name, exc.valid) from None
    except TermsError as exc:
        raise ConfigError(exc.file, exc.line, "", exc.message) from None


class RedactedGenerator:
    """A knowledge answer generator (a model) whose text has every ID number, bank card,
    phone and long number masked (``si_agent.privacy.redact_text``) before anyone reads it.

    The model may repeat a number from the question (sent to it as a placeholder and
    restored masked) or from a passage, or make one up: the citizen sees none in full.
    """

    def __init__(self, generator: Callable[[str, Sequence], str]) -> None:
        self.generator = generator

    def __call__(self, question: str, passages: Sequence) -> str:
        return redact_text(self.generator(question, passages) or "")


# "临时挂失（也叫口头挂失）": a help text naming another word for the term before it.
_ALSO_CALLED = re.compile(r"([\u4e00-\u9fff]+)（(?:也叫|也称|又称|俗称|简称)([\u4e00-\u9fff]{2,8})）")


def business_terms(catalog: Mapping[str, Business]) -> list[BusinessTerms]:
    """The words each business is known by, for the knowledge base's query expansion.

    Phrases: the name, keywords, enum options and field labels; aliases: the
    options' aliases; synonyms: "X（也叫Y）" in the fields' help texts (Y → X).
    A consultation's options are answers about the citizen ("是的", "我挣得多"),
    not words for its topic: only its name, keywords and labels count. The
    knowledge base keeps a phrase only when a single business uses it.
    """
    from rag import BusinessTerms

    out = []
    for b in catalog.values():
        phrases = [*b.keywords]
        aliases: list[str] = []
        synonyms: dict[str, str] = {}
        for f in b.fields:
            phrases.append(f.label)
            if not b.is_consult:
                for o in f.options:
                    phrases.append(o.value)
                    aliases += o.aliases
            for before, other in _ALSO_CALLED.findall(f.help or ""):
                # The term is read as long as the other word: "可以先选临时挂失（也叫口头挂失）".
                synonyms[other] = before[-len(other):]
        out.append(BusinessTerms(b.id, b.name, tuple(dict.fromkeys(phrases)), synonyms,
                                 tuple(dict.fromkeys(a for a in aliases if a not in phrases))))
    return out


def typo_normaliser(settings: Settings, catalog: Mapping[str, Business]) -> Callable[[str], str]:
    """The knowledge base's typo and dialect normaliser (term table of ``settings.kb_dir``,
    homophones of domain words and of the businesses' words), for the rule engine.

    It needs no store and no model; its dictionaries are loaded here, at start-up. A
    broken term table raises ``ConfigError``.
    """
    from rag.errors import TermsError
    from rag.query import understanding_for

    try:
        normaliser = understanding_for(settings.kb_dir, business_terms(catalog)).normaliser
    except TermsError as exc:
        raise ConfigError(exc.file, exc.line, "", exc.message) from None
    normaliser.warm()  # at start-up, not on the first message
    return lambda text: normaliser.normalise(text).text
