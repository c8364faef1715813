"""The shipped corpus and the document parser."""

from __future__ import annotations

import re

import pytest

from rag.documents import load_documents, parse_document
from rag.errors import DocumentError
from si_agent.config.loader import load_businesses

from .conftest import KB_DIR, ROOT


@pytest.fixture(scope="module")
def docs():
    return load_documents(KB_DIR)


def test_corpus_has_forty_documents_with_notes(docs):
    assert len(docs) >= 40
    for d in docs:
        assert d.title and d.source and len(d.body) > 200, d.doc_id
        assert "仅供参考" in d.source, d.doc_id
        assert d.as_of, d.doc_id


def test_as_of_is_read_as_text():
    doc = parse_document("---\ntitle: 标题\nbusinesses: []\nas_of: 2025-06-30\nsource: 来源\n---\n正文",
                         doc_id="x")
    assert doc.as_of == "2025-06-30"


def test_numbers_that_vary_by_city_say_so(docs):
    """A document quoting rates or amounts says in its text, next to the figures' topic,
    that the local figure governs (各地, 当地, 参保地…), or that the figure is national
    (全国统一); the source line's "以当地…为准" does not count."""
    for d in docs:
        if re.search(r"\d+(?:\.\d+)?%|\d+元", d.body):
            assert re.search(r"各地|当地|参保地|各省|统筹地区|地区|全国统一", d.body), d.doc_id


def test_tags_name_real_businesses_and_cover_all_twelve(docs):
    catalog = load_businesses(ROOT / "businesses")
    tagged = {b for d in docs for b in d.businesses}
    assert tagged <= set(catalog)
    assert tagged == set(catalog)  # every business has at least one document
    assert sum(1 for d in docs if not d.businesses) >= 15  # general policy documents


def test_missing_front_matter_is_located():
    with pytest.raises(DocumentError) as err:
        parse_document("# 标题\n正文", doc_id="x", file="x.md")
    assert str(err.value).startswith("x.md:1:")


@pytest.mark.parametrize("front, message", [
    ("title: 标题\nsource: 来源", "businesses"),
    ("businesses: []\nsource: 来源", "title"),
    ("title: 标题\nbusinesses: []", "source"),
    ("title: 标题\nbusinesses: social_transfer\nsource: 来源", "businesses"),
    ("title: 标题\nbusinesses: []\nsource: 来源", "as_of"),
    ("title: 标题\nbusinesses: []\nas_of: 2025-13\nsource: 来源", "as_of"),
    ("title: 标题\nbusinesses: []\nas_of: 去年\nsource: 来源", "as_of"),
    ("title: [unclosed\n", "front matter"),
])
def test_bad_front_matter_is_rejected(front, message):
    with pytest.raises(DocumentError, match=message):
        parse_document(f"---\n{front}\n---\n正文", doc_id="x", file="x.md")


def test_duplicate_ids_are_rejected(tmp_path):
    (tmp_path / "a").mkdir()
    text = "---\ntitle: 标题\nbusinesses: []\nas_of: 2025-06\nsource: 来源\n---\n正文"
    (tmp_path / "x.md").write_text(text, encoding="utf-8")
    (tmp_path / "a" / "x.md").write_text(text, encoding="utf-8")
    with pytest.raises(DocumentError, match="also used"):
        load_documents(tmp_path)
