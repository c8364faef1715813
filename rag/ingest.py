"""Incremental ingest: documents → chunks → vectors → Milvus, by content hash.

A document is embedded again only when its hash changes. The hash covers the
file, the chunking rules and the embedder, so editing a document, changing
the chunker or switching models re-embeds what it must and nothing else.
Documents no longer in the directory (nor among ``extra``: the published uploads of
``rag/library.py``) are deleted. A collection whose vector
size differs from the embedder's is rebuilt (it is derived data). After any
change the collection is flushed and compacted so searches use its indexes.

A chunk whose vector ships with the corpus (``rag/shipped.py``: the
directory's ``_embeddings.*``, made by the same embedder) is copied from there,
not embedded: a new data dir is built in seconds.
"""

from __future__ import annotations

import hashlib
import logging
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from rag import chunking, shipped
from rag.documents import Document, check_unique, load_documents
from rag.embedders import Embedder
from rag.store import MilvusStore

log = logging.getLogger(__name__)


@dataclass
class IngestReport:
    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    chunks_embedded: int = 0
    chunks_shipped: int = 0  # vectors copied from the shipped file, not embedded
    rebuilt: bool = False

    def summary(self) -> str:
        return (f"{len(self.added)} added, {len(self.updated)} updated, "
                f"{len(self.unchanged)} unchanged, {len(self.removed)} removed; "
                f"{self.chunks_embedded} chunks embedded"
                + (f", {self.chunks_shipped} copied from shipped vectors" if self.chunks_shipped
                   else "")
                + (" (rebuilt)" if self.rebuilt else ""))


def document_hash(doc: Document, embedder_name: str) -> str:
    key = f"{doc.sha256}|chunker {chunking.VERSION} {chunking.MAX_CHARS} {chunking.OVERLAP}|{embedder_name}"
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def ingest(store: MilvusStore, embedder: Embedder, directory: Path, *, rebuild: bool = False,
           progress: bool = False, extra: Sequence[Document] = ()) -> IngestReport:
    """Bring the collection in line with ``directory`` and the ``extra`` documents;
    see the module docstring."""
    docs = load_documents(Path(directory)) + list(extra)
    check_unique(docs)
    report = IngestReport()
    dim = embedder.dim
    stored_dim = store.dense_dim()
    if stored_dim is not None and (rebuild or stored_dim != dim):
        if not rebuild:
            log.warning("collection %s holds %d-dim vectors, the embedder gives %d: rebuilding",
                        store.location, stored_dim, dim)
        store.drop()
        stored_dim = None
    if stored_dim is None:
        store.create(dim)
        report.rebuilt = rebuild
    stored = store.documents()
    hashes = {d.doc_id: document_hash(d, embedder.name) for d in docs}
    todo: list[Document] = []
    for d in docs:
        if d.doc_id not in stored:
            report.added.append(d.doc_id)
            todo.append(d)
        elif stored[d.doc_id][0] != hashes[d.doc_id]:
            report.updated.append(d.doc_id)
            todo.append(d)
        else:
            report.unchanged.append(d.doc_id)
    report.removed = sorted(set(stored) - set(hashes))
    # An added document may have left chunks behind from an interrupted ingest: gone first.
    store.delete_documents(report.removed + report.updated + report.added)
    # A document counts as stored once its first chunk is (``store.documents()``): that
    # chunk goes in after the others, so an ingest stopped half-way (a killed first start)
    # leaves the document missing, to be added again, never half of it passing for whole.
    chunks = sorted((c for d in todo for c in chunking.chunk_document(d)),
                    key=lambda c: c.number == 0)
    vectors = shipped.load(directory, embedder) if chunks else None
    report.chunks_embedded = embed_and_insert(store, embedder, chunks, hashes, vectors, progress)
    report.chunks_shipped = len(chunks) - report.chunks_embedded
    if chunks or report.removed or report.updated:
        store.flush()
    log.info("ingest %s: %s", store.location, report.summary())
    return report


def embed_and_insert(store, embedder, chunks, hashes, known, progress: bool,
                      batch: int = 32) -> int:
    """Insert ``chunks`` with their vectors (``known`` ones copied); how many were embedded."""
    from tqdm import tqdm

    embedded = 0
    with tqdm(total=len(chunks), desc="embedding", unit="chunk", disable=not progress or not chunks,
              file=sys.stderr) as bar:
        for i in range(0, len(chunks), batch):
            part = chunks[i:i + batch]
            vectors, fresh = shipped.vectors_for(part, embedder, known)
            store.insert(part, vectors, doc_hashes=hashes, embedder=embedder.name)
            embedded += fresh
            bar.update(len(part))
    return embedded
