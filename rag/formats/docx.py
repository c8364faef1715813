"""Word .docx → Markdown with python-docx.

The body is read in order, paragraphs and tables interleaved as they are in the file.
A paragraph's heading level comes from its style ("Heading 1", "Title", Chinese Word's
"标题 1") or its outline level; an unstyled short line numbered as a 公文 heading
("一、", "（二）", "第三条") is one too (``structure``). A table becomes a line per row,
merged cells once. Headers, footers, comments and tracked deletions are left out.
"""

from __future__ import annotations

import io
import logging
import re
import zipfile
import zlib
from collections.abc import Iterator

from rag.formats import Converted
from rag.formats.sniff import FileRefused, Limits
from rag.formats.structure import markdown, table_lines

log = logging.getLogger(__name__)

_STYLE_LEVEL = re.compile(r"^(?:heading|标题)\s*(\d)$", re.I)
_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"


def convert_docx(data: bytes, limits: Limits) -> Converted:
    import docx
    from lxml.etree import LxmlError

    try:
        document = docx.Document(io.BytesIO(data))
        blocks = list(_blocks(document))
        title = document.core_properties.title or ""
    except (zipfile.BadZipFile, zlib.error, KeyError, ValueError, LxmlError, OSError, EOFError,
            NotImplementedError) as exc:
        log.info("unreadable docx: %s: %s", type(exc).__name__, exc)
        raise FileRefused("broken_docx") from None
    except Exception as exc:  # python-docx's own (PackageNotFoundError, InvalidXmlError)
        if type(exc).__module__.startswith("docx"):
            log.info("unreadable docx: %s: %s", type(exc).__name__, exc)
            raise FileRefused("broken_docx") from None
        raise
    return Converted("docx", markdown(blocks), title=title.strip())


def _blocks(document) -> Iterator[tuple[str, object]]:
    from docx.table import Table
    from docx.text.paragraph import Paragraph

    for child in document.element.body.iterchildren():
        if child.tag == f"{_W}p":
            paragraph = Paragraph(child, document)
            text = paragraph.text
            if not text.strip():
                continue
            level = _level(paragraph)
            yield (f"h{level}" if level else "p", text)
        elif child.tag == f"{_W}tbl":
            yield ("table", table_lines(_rows(Table(child, document))))


def _level(paragraph) -> int | None:
    style = paragraph.style
    name = (style.name or "") if style is not None else ""
    if name.lower() == "title" or name == "标题":
        return 1
    match = _STYLE_LEVEL.match(name.strip())
    if match:
        return max(1, min(int(match.group(1)), 6))
    outline = paragraph._p.find(f"{_W}pPr/{_W}outlineLvl")
    if outline is not None:
        value = outline.get(f"{_W}val", "")
        if value.isdigit() and int(value) < 9:
            return int(value) + 1
    return None


def _rows(table) -> list[list[str]]:
    rows = []
    for row in table.rows:
        seen: set[int] = set()
        cells = []
        for cell in row.cells:
            if id(cell._tc) in seen:  # a merged cell is listed once per column it spans
                continue
            seen.add(id(cell._tc))
            cells.append(cell.text)
        rows.append(cells)
    return rows
