"""Chunking by heading and paragraph, bounded, with overlap."""

from __future__ import annotations

from rag.chunking import MAX_CHARS, chunk_document
from rag.documents import load_documents, parse_document

from .conftest import KB_DIR


def _doc(body: str, title: str = "测试文档"):
    return parse_document(f"---\ntitle: {title}\nbusinesses: [x]\nas_of: 2025-06\nsource: 来源\n---\n{body}",
                          doc_id="t")


def test_sections_follow_headings_and_skip_the_title():
    doc = _doc("# 测试文档\n\n引言一句。\n\n## 材料\n- 身份证\n- 照片\n\n## 流程\n先申请，再领卡。")
    chunks = chunk_document(doc)
    assert [(c.heading, c.text) for c in chunks] == [
        ("", "引言一句。"), ("材料", "- 身份证\n- 照片"), ("流程", "先申请，再领卡。"),
    ]
    assert [c.chunk_id for c in chunks] == ["t#000", "t#001", "t#002"]
    assert chunks[1].search_text == "测试文档｜材料\n- 身份证\n- 照片"
    assert chunks[1].businesses == ("x",)


def test_long_paragraphs_are_cut_at_sentence_ends_with_overlap():
    sentences = [f"第{i}句话说明一项办理要求和注意事项，请仔细阅读。" for i in range(30)]
    doc = _doc("## 长段落\n" + "".join(sentences))
    chunks = chunk_document(doc, max_chars=120, overlap=40)
    assert len(chunks) > 3
    assert all(len(c.text) <= 120 for c in chunks)
    for c in chunks:
        assert c.text.endswith("。")  # never cut inside a sentence
    for prev, nxt in zip(chunks, chunks[1:], strict=False):
        last = prev.text.split("\n")[-1]
        assert nxt.text.startswith(last[-25:]) or last.split("。")[-2] in nxt.text
    text = "".join(sentences)
    assert all(s in "".join(c.text for c in chunks) for s in sentences)
    assert len(text) < sum(len(c.text) for c in chunks)  # the overlap repeats a little


def test_paragraphs_are_packed_within_a_section_but_not_across_headings():
    doc = _doc("## 一\n甲。\n\n乙。\n\n## 二\n丙。")
    chunks = chunk_document(doc)
    assert [c.text for c in chunks] == ["甲。\n乙。", "丙。"]


def test_a_sentence_without_stops_is_hard_cut():
    doc = _doc("## 无标点\n" + "字" * 700)
    chunks = chunk_document(doc)
    assert [len(c.text) for c in chunks] == [MAX_CHARS, MAX_CHARS, 100]


def test_shipped_corpus_chunks_are_bounded():
    chunks = [c for d in load_documents(KB_DIR) for c in chunk_document(d)]
    assert len(chunks) > 150
    assert max(len(c.text) for c in chunks) <= MAX_CHARS
    assert len({c.chunk_id for c in chunks}) == len(chunks)
