"""Conversion of each format (``rag.formats``) on a Chinese policy notice made in the test.

Every format must keep the notice's sentences whole and in order, its numbered
headings as headings (the chunker cuts there), and each table row with its column
headers; what is around the text (page numbers, a page's navigation and scripts) goes.
"""

from __future__ import annotations

import re

import pytest

from rag.chunking import chunk_document
from rag.formats import FileRefused, Limits, convert
from rag.formats.structure import heading_level, table_lines
from rag.library import Meta, as_document
from tests.documents import govdocs

MAKERS = {"docx": govdocs.docx, "pdf": govdocs.pdf, "html": govdocs.html, "md": govdocs.markdown}


@pytest.mark.parametrize("ext", sorted(MAKERS))
def test_text_order_headings_and_tables_survive(ext):
    converted = convert(MAKERS[ext](), f"通知.{ext}")
    text = converted.text
    positions = [text.find(fact) for fact in govdocs.FACTS]
    assert -1 not in positions, [f for f, p in zip(govdocs.FACTS, positions, strict=True) if p < 0]
    assert positions == sorted(positions)
    for heading, _ in govdocs.SECTIONS:
        assert re.search(rf"(?m)^##+ {re.escape(heading)}$", text), heading
    assert govdocs.TABLE_ROW in text
    assert "- 1 -" not in text and "- 2 -" not in text
    assert "政策法规" not in text and "var a" not in text and "ICP" not in text  # html chrome


@pytest.mark.browser
def test_a_pdf_printed_by_chromium_with_its_font_embedded(playwright_driver):
    """Noto CJK's ToUnicode maps 金, 月, 人, 长, 民… to Kangxi and supplement radicals
    (U+2F00-U+2FDF, U+2E80-U+2EFF): the text must come out as the characters."""
    text = convert(govdocs.chromium_pdf(playwright_driver), "通知.pdf").text
    assert f"# {govdocs.TITLE}\n" in text  # a title set on two lines: one heading
    for fact in govdocs.FACTS:
        assert fact in text
    assert govdocs.TABLE_ROW in text and "天府市民云" in text
    assert "蓉人社发〔2026〕18号\n\n各区" in text  # a short line ends its paragraph
    assert "- 1 -" not in text and not re.search("[\u2e80-\u2fdf]", text)


@pytest.mark.parametrize("ext", sorted(MAKERS))
def test_the_chunks_follow_the_headings(ext):
    converted = convert(MAKERS[ext](), f"通知.{ext}")
    doc = as_document("doc-0000abcd", Meta(govdocs.TITLE, "测试", "2026-01"), converted.text)
    chunks = chunk_document(doc)
    rate = next(c for c in chunks if "即每月2070元" in c.text)
    assert rate.heading == "二、发放标准"
    assert any(govdocs.TABLE_ROW in c.text for c in chunks)


def test_excel_sheets_are_sections_and_rows_keep_their_headers():
    converted = convert(govdocs.xlsx(), "标准.xlsx")
    assert converted.pages == 2 and converted.title == "失业保险金领取期限及标准（2026年）"
    assert "## 领取标准" in converted.text and "## 申领渠道" in converted.text
    assert govdocs.TABLE_ROW in converted.text
    assert "渠道：四川人社App；说明：无需提交纸质材料" in converted.text


def test_a_pdf_with_only_an_owner_password_is_read():
    converted = convert(govdocs.pdf(restricted=True), "通知.pdf")
    assert govdocs.FACTS[1] in converted.text and converted.pages == 2


def test_gb18030_text_and_plain_numbered_headings():
    text = "失业保险金申领须知\n\n一、申领条件\n非因本人意愿中断就业，已办理失业登记。\n第三条 本须知自发布之日起施行。"
    converted = convert(text.encode("gb18030"), "须知.txt")
    assert "## 一、申领条件\n\n非因本人意愿中断就业" in converted.text
    assert "### 第三条\n\n本须知自发布之日起施行。" in converted.text


def test_gongwen_heading_levels():
    assert heading_level("一、调整范围") == 2
    assert heading_level("（二）领取期限") == 3
    assert heading_level("第一章 总则") == 2
    assert heading_level("一、" + "长" * 60) is None  # a paragraph, not a heading
    assert heading_level("2026年1月1日起执行") is None


def test_a_table_with_a_title_row_and_one_without_a_header():
    rows = [["领取标准", "领取标准"], ["年限", "期限"], ["满1年", "12个月"]]
    assert table_lines([["领取标准", ""], *rows[1:]]) == ["领取标准", "- 年限：满1年；期限：12个月"]
    assert table_lines([["只有一列"], ["第二行"]]) == ["- 只有一列", "- 第二行"]


@pytest.mark.parametrize("data,name,code", [
    (b"hello", "a.exe", "unsupported_type"),
    (b"\x7fELF\x02\x01" + bytes(100), "a.pdf", "foreign_file"),
    (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(600), "a.docx", "foreign_file"),
    (b"PK\x05\x06" + bytes(18), "a.xlsx", "type_mismatch"),  # an empty zip
    (b"PK\x03\x04" + bytes(40), "a.xlsx", "broken_zip"),
    pytest.param(govdocs.of_a_later_zip_version(govdocs.docx()), "a.docx", "broken_zip",
                 id="docx-of-a-later-zip-version"),
    pytest.param(govdocs.of_a_later_zip_version(govdocs.xlsx()), "a.xlsx", "broken_zip",
                 id="xlsx-of-a-later-zip-version"),
    (b"x" * 11, "a.md", "too_large"),
])
def test_refusals_by_content(data, name, code):
    with pytest.raises(FileRefused) as refused:
        convert(data, name, Limits(max_bytes=10) if code == "too_large" else None)
    assert refused.value.code == code and "未上传" in refused.value.message


def test_a_zip_bomb_is_refused_before_inflating():
    import io
    import zipfile

    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("[Content_Types].xml", "<Types/>")
        z.writestr("xl/workbook.xml", "<workbook/>")
        for n in range(3):
            z.writestr(f"xl/worksheets/sheet{n}.xml", b" " * (100 * 2**20))
    with pytest.raises(FileRefused) as refused:
        convert(out.getvalue(), "a.xlsx")
    assert refused.value.code == "zip_bomb"
