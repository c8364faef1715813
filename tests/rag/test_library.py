"""Uploaded documents (``rag.library``) in the knowledge base: published incrementally.

A real Milvus Lite directory, the small corpus and the hashing embedder (which counts
what it embeds): publishing a document embeds its chunks and nothing else, a new
version replaces its chunks, ``ingest`` and a fresh build keep what was published,
withdrawing removes it; the answer cites the uploaded document.
"""

from __future__ import annotations

import pytest

from rag.errors import DocumentError
from rag.formats import convert
from rag.knowledge_base import KnowledgeBase
from rag.library import Library, Meta
from rag.query import understanding_for
from rag.store import MilvusStore
from tests.documents import govdocs

META = Meta(govdocs.TITLE, "蓉人社发〔2026〕18号", "2026-01", ("unemployment_benefit",))


def _kb(tmp_path, corpus, embedder, name="kb.db") -> KnowledgeBase:
    store = MilvusStore(str(tmp_path / name), "test_chunks")
    return KnowledgeBase(store, embedder, kb_dir=corpus, library=Library(tmp_path / "documents"),
                         understanding=understanding_for(corpus))


def _draft(kb: KnowledgeBase, data: bytes, filename: str, meta: Meta = META, doc_id=None):
    c = convert(data, filename)
    return kb.library.add(data, filename, c.format, c.text, c.pages, meta, "li", doc_id=doc_id)


def test_publishing_embeds_that_document_only_and_the_answer_cites_it(tmp_path, small_corpus,
                                                                     hashing):
    kb = _kb(tmp_path, small_corpus, hashing)
    assert kb.status()["ok"]
    before = kb.store.documents()
    count = kb.store.count()
    hashing.calls.clear()
    draft = _draft(kb, govdocs.docx(), "通知.docx")
    assert kb.store.documents() == before  # a draft is not searched
    report = kb.publish(draft.document())
    kb.library.mark_published(draft.doc_id, draft.version, "li")
    assert report.chunks == report.embedded == sum(hashing.calls) >= 3
    assert kb.store.count() == count + report.chunks
    after = kb.store.documents()
    assert {k: v for k, v in after.items() if k != draft.doc_id} == before  # the rest untouched
    answer = kb.answer("缴费满10年以上的失业保险金每月增发多少")
    assert answer is not None and govdocs.TITLE in answer.sources
    assert "2026年1月" in answer.text  # its as-of date


def test_a_new_version_replaces_the_chunks_of_the_old(tmp_path, small_corpus, hashing):
    kb = _kb(tmp_path, small_corpus, hashing)
    first = _draft(kb, govdocs.docx(), "通知.docx")
    kb.publish(first.document())
    kb.library.mark_published(first.doc_id, 1, "li")
    count = kb.store.count()
    renamed = Meta("关于调整失业保险金标准的通知（修订）", META.source, "2026-02", META.businesses)
    second = _draft(kb, govdocs.pdf(), "通知.pdf", renamed, doc_id=first.doc_id)
    assert second.version == 2
    report = kb.publish(second.document())
    kb.library.mark_published(first.doc_id, 2, "li")
    assert kb.store.count() == count - _chunks(first) + report.chunks
    states = [v.state for v in kb.library.record(first.doc_id).versions]
    assert states == ["published", "superseded"]
    hits = kb.search("失业保险金发放标准 2070元", k=8)
    titles = {h.title for h in hits if h.doc_id == first.doc_id}
    assert titles == {renamed.title}


def _chunks(version) -> int:
    from rag.chunking import chunk_document

    return len(chunk_document(version.document()))


def test_ingest_and_a_fresh_build_keep_the_published_uploads(tmp_path, small_corpus, hashing):
    kb = _kb(tmp_path, small_corpus, hashing)
    draft = _draft(kb, govdocs.html(), "通知.html")
    kb.publish(draft.document())
    kb.library.mark_published(draft.doc_id, 1, "li")
    report = kb.ingest()  # si-agent kb ingest
    assert draft.doc_id in report.unchanged and report.removed == []
    kb.store.close()
    fresh = _kb(tmp_path, small_corpus, hashing, name="fresh.db")  # a new data dir's first start
    assert fresh.status()["ok"]
    assert draft.doc_id in fresh.store.documents()
    assert govdocs.TITLE in fresh.answer("2026年度失业保险金发放标准是多少").sources


def test_withdrawing_removes_the_document_from_the_answers(tmp_path, small_corpus, hashing):
    kb = _kb(tmp_path, small_corpus, hashing)
    assert kb.status()["ok"]
    before = kb.store.documents()
    draft = _draft(kb, govdocs.markdown(), "通知.md")
    kb.publish(draft.document())
    kb.withdraw(draft.doc_id)
    assert kb.store.documents() == before
    answer = kb.answer("2026年度失业保险金发放标准是多少")
    assert answer is None or govdocs.TITLE not in answer.sources


def test_the_library_keeps_versions_and_replaces_a_pending_draft(tmp_path):
    library = Library(tmp_path / "documents")
    assert library.published() == [] and not (tmp_path / "documents").exists()
    c = convert(govdocs.markdown(), "a.md")
    one = library.add(b"v1", "a.md", c.format, c.text, 1, META, "li")
    two = library.add(b"v2", "a.md", c.format, c.text, 1, META, "li", doc_id=one.doc_id)
    (only,) = library.record(one.doc_id).versions  # the draft v1 was replaced
    assert only.version == two.version == 2
    assert not library.original_path(one).exists() and library.original_path(two).read_bytes() == b"v2"
    library.mark_published(one.doc_id, 2, "li")
    three = library.add(b"v3", "a.md", c.format, c.text, 1, META, "wang", doc_id=one.doc_id)
    assert [v.state for v in library.record(one.doc_id).versions] == ["draft", "published"]
    library.discard(one.doc_id, three.version)
    assert [d.doc_id for d in library.published()] == [one.doc_id]
    with pytest.raises(KeyError):
        library.discard(one.doc_id, 2)  # a published version is no draft
    with pytest.raises(KeyError):
        library.add(b"x", "a.md", c.format, c.text, 1, META, "li", doc_id="doc-00000000")
    with pytest.raises(DocumentError):
        library.add(b"x", "a.md", c.format, c.text, 1, Meta("t", "s", "2026-13"), "li")
    library.delete(one.doc_id)
    assert library.records() == [] and not (tmp_path / "documents" / "originals" / one.doc_id).exists()


def test_another_process_learns_a_published_document_when_it_finds_it(tmp_path, small_corpus,
                                                                       hashing):
    """Workers sharing a Milvus server: one publishes, the other finds the chunks and reads
    the document's date from the library then (two channels over one store here)."""
    kb = _kb(tmp_path, small_corpus, hashing)
    other = KnowledgeBase(kb.store, hashing, kb_dir=small_corpus,
                          library=Library(tmp_path / "documents"),
                          understanding=understanding_for(small_corpus))
    assert kb.status()["ok"] and other.status()["ok"]
    draft = _draft(kb, govdocs.docx(), "通知.docx")
    kb.publish(draft.document())
    kb.library.mark_published(draft.doc_id, 1, "li")
    answer = other.answer("缴费满10年以上的失业保险金每月增发多少")
    assert answer is not None and f"《{govdocs.TITLE}》（2026年1月）" in answer.text
