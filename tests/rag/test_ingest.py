"""Incremental ingest by content hash, on a real Milvus Lite directory."""

from __future__ import annotations

from rag.embedders.hashing import HashingEmbedder
from rag.ingest import ingest
from rag.store import MilvusStore


def _store(tmp_path, name="kb.db") -> MilvusStore:
    return MilvusStore(str(tmp_path / name), "test_chunks")


def test_first_ingest_embeds_everything_second_nothing(tmp_path, small_corpus, hashing):
    store = _store(tmp_path)
    first = ingest(store, hashing, small_corpus)
    assert sorted(first.added) == ["card", "five", "transfer"]
    assert first.chunks_embedded == sum(hashing.calls) == 5
    assert store.count() == 5

    hashing.calls.clear()
    second = ingest(store, hashing, small_corpus)
    assert second.added == second.updated == second.removed == []
    assert sorted(second.unchanged) == ["card", "five", "transfer"]
    assert second.chunks_embedded == 0 and hashing.calls == []
    assert store.count() == 5


def test_an_edited_document_re_embeds_only_itself(tmp_path, small_corpus, hashing):
    store = _store(tmp_path)
    ingest(store, hashing, small_corpus)
    path = small_corpus / "card.md"
    path.write_text(path.read_text(encoding="utf-8").replace("尽快挂失", "立即挂失，防止被冒用"),
                    encoding="utf-8")
    hashing.calls.clear()
    report = ingest(store, hashing, small_corpus)
    assert report.updated == ["card"]
    assert report.added == report.removed == []
    assert sum(hashing.calls) == report.chunks_embedded == 1
    hit = store.search("防止被冒用", None, k=1, mode="bm25")[0]
    assert hit.doc_id == "card" and "立即挂失" in hit.text
    assert store.count() == 5  # the old chunk was replaced, not duplicated


def test_a_deleted_document_is_removed(tmp_path, small_corpus, hashing):
    store = _store(tmp_path)
    ingest(store, hashing, small_corpus)
    (small_corpus / "transfer.md").unlink()
    report = ingest(store, hashing, small_corpus)
    assert report.removed == ["transfer"] and report.chunks_embedded == 0
    assert set(store.documents()) == {"card", "five"}
    assert store.count() == 2
    assert all(h.doc_id != "transfer" for h in store.search("社保转移", None, k=5, mode="bm25"))


def test_rebuild_and_a_new_embedder(tmp_path, small_corpus, hashing):
    store = _store(tmp_path)
    ingest(store, hashing, small_corpus)
    rebuilt = ingest(store, hashing, small_corpus, rebuild=True)
    assert rebuilt.rebuilt and rebuilt.chunks_embedded == 5
    # Another model (here another vector size) re-embeds the corpus into a fresh collection.
    other = HashingEmbedder(dim=128)
    report = ingest(store, other, small_corpus)
    assert sorted(report.added) == ["card", "five", "transfer"]
    assert store.dense_dim() == 128 and store.count() == 5


def test_search_modes_and_scores(tmp_path, small_corpus, hashing):
    store = _store(tmp_path)
    ingest(store, hashing, small_corpus)
    query = "社保卡丢了怎么挂失"
    vector = hashing.embed([query], query=True)[0]
    for mode in ("dense", "bm25", "hybrid"):
        hits = store.search(query, vector, k=3, mode=mode)
        assert hits[0].doc_id == "card", mode
        assert hits[0].businesses == ("card_loss",)
        assert all(h.score > 0 for h in hits), mode  # Milvus Lite's negative BM25 is flipped
        assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
        assert hits[0].cosine is not None and 0 < hits[0].cosine <= 1.0001


def test_reopened_collection_is_loaded_before_search(tmp_path, small_corpus, hashing):
    store = _store(tmp_path)
    ingest(store, hashing, small_corpus)
    store.client().release_collection(store.collection)
    reopened = MilvusStore(store.uri, store.collection)
    assert reopened.search("挂失", None, k=1, mode="bm25")[0].doc_id == "card"


def test_an_existing_collection_is_used_as_is_and_changes_are_reported(tmp_path, small_corpus,
                                                                       hashing, caplog):
    from rag.knowledge_base import KnowledgeBase

    store = _store(tmp_path)
    ingest(store, hashing, small_corpus)
    (small_corpus / "five.md").write_text("不是文档", encoding="utf-8")
    (small_corpus / "card.md").unlink()
    hashing.calls.clear()
    kb = KnowledgeBase(MilvusStore(store.uri, store.collection), hashing, kb_dir=small_corpus)
    assert kb.status()["ok"]
    assert "cannot check the knowledge documents" in caplog.text
    assert hashing.calls == []  # nothing re-embedded behind the operator's back
    (small_corpus / "five.md").unlink()
    kb = KnowledgeBase(MilvusStore(store.uri, store.collection), hashing, kb_dir=small_corpus)
    assert kb.status()["ok"]
    assert "changed since the last ingest" in caplog.text


def test_a_build_stopped_half_way_is_completed_at_the_next_start(tmp_path, small_corpus, hashing,
                                                                  caplog):
    """A first start killed while building: the next start adds what is missing, and a
    document whose later chunks made it in but not its first is added whole, not twice."""
    from rag import chunking
    from rag.documents import load_documents
    from rag.knowledge_base import KnowledgeBase

    store = _store(tmp_path)
    ingest(store, hashing, small_corpus)
    full = store.count()
    docs = {d.doc_id: d for d in load_documents(small_corpus)}
    longest = max(docs, key=lambda k: len(chunking.chunk_document(docs[k])))
    assert len(chunking.chunk_document(docs[longest])) > 1
    other = next(k for k in docs if k != longest)
    # What a kill leaves: one document not stored at all, another without its first chunk.
    store.delete_documents([other])
    store.client().delete(store.collection, filter=f'doc_id == "{longest}" and number == 0')
    store.flush()
    assert set(store.documents()) == set(docs) - {other, longest}
    kb = KnowledgeBase(MilvusStore(store.uri, store.collection), hashing, kb_dir=small_corpus)
    assert kb.status()["ok"]
    assert "stopped half-way" in caplog.text
    assert set(store.documents()) == set(docs)
    assert store.count() == full


def test_an_ingest_puts_each_document_first_chunk_last(tmp_path, small_corpus, hashing):
    """The order that makes a stopped ingest safe: a document is listed once its first
    chunk is stored, so that chunk goes in after the others."""
    store = _store(tmp_path)
    inserted: list[int] = []
    real = store.insert

    def spy(chunks, vectors, **kw):
        inserted.extend(c.number for c in chunks)
        return real(chunks, vectors, **kw)

    store.insert = spy  # type: ignore[method-assign]
    ingest(store, hashing, small_corpus)
    firsts = [i for i, n in enumerate(inserted) if n == 0]
    assert firsts and min(firsts) > max(i for i, n in enumerate(inserted) if n != 0)


def test_the_dense_query_reads_only_the_start_of_a_pasted_page(tmp_path, small_corpus, hashing):
    # A 2,000-character message cost the real embedder ~2.5 s of CPU per question.
    from rag.retriever import QUERY_CHARS, MilvusRetriever

    store = _store(tmp_path)
    ingest(store, hashing, small_corpus)
    seen: list[str] = []
    real = hashing.embed

    def spy(texts, *, query=False):
        seen.extend(texts)
        return real(texts, query=query)

    hashing.embed = spy  # type: ignore[method-assign]
    hits = MilvusRetriever(store, hashing).search("社保卡挂失怎么办" * 250, k=1)
    assert seen == [("社保卡挂失怎么办" * 250)[:QUERY_CHARS]]
    assert hits and hits[0].doc_id == "card"
