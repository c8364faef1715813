"""The corpus's vectors ship with it: up to date, and used instead of embedding.

``rag/knowledge/_embeddings.*`` must list exactly the chunks of the corpus, made by
the default embedder (name and version), and hold that embedder's vectors; a new
Milvus Lite store is then built without embedding a chunk that did not change.
"""

from __future__ import annotations

import numpy as np
import pytest

from rag import chunking, shipped
from rag.documents import load_documents
from rag.embedders import create_embedder
from rag.embedders.hashing import HashingEmbedder
from rag.ingest import ingest
from rag.store import MilvusStore

from .conftest import KB_DIR

STALE = f"rag/knowledge/_embeddings.* is out of date with the corpus: run {shipped.REGENERATE}"


class Counting:
    """The default embedder, counting the passages it is asked to embed."""

    def __init__(self, embedder) -> None:
        self.embedder = embedder
        self.name = embedder.name
        self.version = embedder.version
        self.embedded = 0

    @property
    def dim(self) -> int:
        return self.embedder.dim

    def embed(self, texts, *, query=False):
        self.embedded += len(texts)
        return self.embedder.embed(texts, query=query)


@pytest.fixture(scope="module")
def corpus_chunks():
    return [c for d in load_documents(KB_DIR) for c in chunking.chunk_document(d)]


def test_the_shipped_vectors_are_up_to_date_with_the_corpus(corpus_chunks):
    embedder = create_embedder()
    vectors = shipped.load(KB_DIR)
    assert vectors is not None, STALE
    assert vectors.embedder == shipped.embedder_id(embedder), STALE
    assert set(vectors.keys) == {shipped.chunk_key(c) for c in corpus_chunks}, STALE
    assert vectors.vectors.dtype == np.float16 and vectors.dim == embedder.dim
    # They are this embedder's: a few chunks embedded now give the same vectors.
    sample = corpus_chunks[:: max(1, len(corpus_chunks) // 4)]
    fresh = embedder.embed([c.search_text for c in sample])
    for chunk, vector in zip(sample, fresh, strict=True):
        cosine = float(np.dot(vector, np.asarray(vectors.get(chunk), dtype=np.float32)))
        assert cosine > 0.999, f"{chunk.chunk_id}: cosine {cosine:.4f}; {STALE}"


def test_a_new_data_dir_is_built_without_embedding_the_corpus(tmp_path, corpus_chunks):
    embedder = Counting(create_embedder())
    store = MilvusStore(str(tmp_path / "kb.db"), "shipped")
    report = ingest(store, embedder, KB_DIR)
    assert embedder.embedded == report.chunks_embedded == 0
    assert report.chunks_shipped == store.count() == len(corpus_chunks)
    hit = store.search("社保转移需要什么材料", embedder.embed(["社保转移需要什么材料"], query=True)[0],
                       k=3)
    assert any(h.doc_id == "social-transfer" for h in hit), hit


def test_only_changed_chunks_are_embedded_and_another_embedder_ignores_the_file(
        tmp_path, small_corpus):
    hashing = HashingEmbedder()
    assert shipped.write(small_corpus, hashing) == (0, 5)
    assert shipped.write(small_corpus, hashing) == (5, 0)  # nothing changed: nothing embedded
    path = small_corpus / "card.md"
    path.write_text(path.read_text(encoding="utf-8").replace("尽快挂失", "立即挂失"),
                    encoding="utf-8")
    hashing.calls.clear()
    report = ingest(MilvusStore(str(tmp_path / "kb.db"), "small"), hashing, small_corpus)
    assert (report.chunks_embedded, report.chunks_shipped) == (1, 4) and hashing.calls == [1]

    other = HashingEmbedder(dim=128)  # another name: the file is not its vectors
    assert shipped.load(small_corpus, other) is None
    report = ingest(MilvusStore(str(tmp_path / "other.db"), "small"), other, small_corpus)
    assert (report.chunks_embedded, report.chunks_shipped) == (5, 0)
