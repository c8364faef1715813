"""PDF → Markdown with pdfplumber (pdfminer.six underneath).

Per page: the tables pdfplumber finds (ruled ones) become rows (``structure.table_lines``);
the rest of the text comes as lines in reading order, with each line's font size. A line
set larger than the body text is a heading (the largest size level 1, the next level 2,
…); lines wrapped inside a paragraph are joined again (Chinese without a space); page
numbers ("- 3 -", "第 3 页") are dropped. A PDF that needs a password is refused, one that
opens with the empty password (print or copy restrictions only) is read. When pdfminer
cannot map a font's glyphs to characters (it writes "(cid:123)"), the text comes from
PDFium (pypdfium2, which pdfplumber brings) instead, as plain lines; if neither can, the
file is refused.
"""

from __future__ import annotations

import io
import logging
import re
import statistics

from rag import texts
from rag.formats import Converted
from rag.formats.sniff import FileRefused, Limits
from rag.formats.structure import clean_line, heading_level, markdown, table_lines

log = logging.getLogger(__name__)

_PAGE_NUMBER = re.compile(r"^[-—–\s]*(?:\d+|第\s*\d+\s*页(?:\s*[/，,]?\s*共\s*\d+\s*页)?)[-—–\s]*$")
_ENDS = "。！？；：!?;:"


def convert_pdf(data: bytes, limits: Limits) -> Converted:
    import pdfplumber
    from pdfminer.pdfdocument import PDFEncryptionError, PDFPasswordIncorrect
    from pdfminer.pdfparser import PDFSyntaxError
    from pdfminer.psexceptions import PSException

    try:
        with pdfplumber.open(io.BytesIO(data)) as pdf:
            if len(pdf.pages) > limits.max_pages:
                raise FileRefused("too_many_pages", pages=limits.max_pages)
            pages = [_page(page) for page in pdf.pages]
            count = len(pdf.pages)
            title = str((pdf.metadata or {}).get("Title") or "")
    except (PDFPasswordIncorrect, PDFEncryptionError):
        raise FileRefused("encrypted_pdf") from None
    except FileRefused:
        raise
    except (PDFSyntaxError, PSException, ValueError, KeyError, TypeError, AttributeError,
            IndexError, AssertionError, RecursionError, OSError) as exc:
        # pdfminer raises what it meets in a broken file, not one exception of its own.
        log.info("unreadable PDF: %s: %s", type(exc).__name__, exc)
        raise FileRefused("broken_pdf") from None
    except Exception as exc:
        if type(exc).__name__ == "PdfminerException":  # pdfplumber's wrapper (0.11)
            cause = exc.__cause__ or (exc.args[0] if exc.args else None)
            if isinstance(cause, PDFPasswordIncorrect | PDFEncryptionError):
                raise FileRefused("encrypted_pdf") from None
            log.info("unreadable PDF: %s", exc)
            raise FileRefused("broken_pdf") from None
        raise
    text = markdown(_blocks(pages))
    notes: tuple[str, ...] = ()
    if _unmapped(text):
        # pdfminer found no Unicode for the glyphs (a font without a ToUnicode map, or
        # one it cannot decrypt): PDFium often can. Its text has no font sizes or tables.
        text = markdown(_plain_blocks(_pdfium_lines(data)))
        notes = (texts.PDF_PLAIN_TEXT,)
        if _unmapped(text):
            raise FileRefused("unmapped_pdf")
    return Converted("pdf", text, pages=count, title=title.strip(), notes=notes)


_CID = re.compile(r"\(cid:\d+\)")


def _unmapped(text: str) -> bool:
    """Whether much of the text is pdfminer's "(cid:123)" for glyphs without Unicode."""
    return len(_CID.findall(text)) * 10 > max(len(text) // 8, 1)


def _pdfium_lines(data: bytes) -> list[str]:
    import pypdfium2

    lines: list[str] = []
    pdf = pypdfium2.PdfDocument(data)
    try:
        for page in pdf:
            textpage = page.get_textpage()
            for line in textpage.get_text_range().splitlines():
                line = clean_line(line)
                if line and not _PAGE_NUMBER.match(line):
                    lines.append(line)
    finally:
        pdf.close()
    return lines


def _plain_blocks(lines: list[str]) -> list[tuple[str, object]]:
    """Lines without geometry: a paragraph ends at a sentence end, a heading is its own."""
    blocks: list[tuple[str, object]] = []
    paragraph: list[str] = []
    for line in lines:
        if heading_level(line) is not None:
            if paragraph:
                blocks.append(("p", _join(paragraph)))
                paragraph = []
            blocks.append(("p", line))
            continue
        paragraph.append(line)
        if line[-1] in _ENDS:
            blocks.append(("p", _join(paragraph)))
            paragraph = []
    if paragraph:
        blocks.append(("p", _join(paragraph)))
    return blocks


def _page(page) -> list[tuple[float, str, object]]:
    """(top, kind, value) items of one page: ("line", (text, size, x0, x1)) and ("table", lines)."""
    items: list[tuple[float, str, object]] = []
    tables = page.find_tables()
    boxes = [t.bbox for t in tables]
    for table in tables:
        items.append((table.bbox[1], "table", table_lines(table.extract())))

    def outside(obj) -> bool:
        x = (obj["x0"] + obj["x1"]) / 2
        y = (obj["top"] + obj["bottom"]) / 2
        return not any(b[0] <= x <= b[2] and b[1] <= y <= b[3] for b in boxes)

    text_page = page.filter(outside) if boxes else page
    for line in text_page.extract_text_lines(return_chars=True):
        text = clean_line(line["text"])
        if not text or _PAGE_NUMBER.match(text):
            continue
        sizes = [c.get("size", 0.0) for c in line["chars"] if not c["text"].isspace()]
        size = round(statistics.median(sizes), 1) if sizes else 0.0
        items.append((line["top"], "line", (text, size, line["x0"], line["x1"], page.width)))
    items.sort(key=lambda item: item[0])
    return items


def _blocks(pages: list[list[tuple[float, str, object]]]) -> list[tuple[str, object]]:
    lines = [v for page in pages for _, kind, v in page if kind == "line"]
    if not lines:
        return []
    sizes = [line[1] for line in lines]
    body = statistics.median(sizes)
    bigger = sorted({s for s in sizes if s >= body * 1.15}, reverse=True)
    levels = {s: min(n + 1, 4) for n, s in enumerate(bigger)}
    left = min(line[2] for line in lines)
    right = max(line[3] for line in lines)  # the text's right edge: a full line reaches it
    blocks: list[tuple[str, object]] = []
    paragraph: list[str] = []
    last: tuple | None = None
    last_heading = False

    def close() -> None:
        if paragraph:
            blocks.append(("p", _join(paragraph)))
            paragraph.clear()

    for page in pages:
        for _, kind, value in page:
            if kind == "table":
                close()
                blocks.append(("table", value))
                last = None
                continue
            text, size, x0, x1, width = value  # type: ignore[misc]
            if size in levels:
                close()
                kind = f"h{levels[size]}"
                if blocks and blocks[-1][0] == kind and last_heading:
                    blocks[-1] = (kind, blocks[-1][1] + text)  # a title set on two lines
                else:
                    blocks.append((kind, text))
                last, last_heading = None, True
                continue
            last_heading = False
            indented = x0 - left > body * 1.5
            # A line that stops short of the right edge ends its paragraph (a wrapped
            # line runs to the edge); so does one ending a sentence, a little short.
            short = last is not None and last[3] < right - body * 2
            ends = last is not None and last[0][-1] in _ENDS and last[3] < right - body * 0.5
            starts = (indented or heading_level(text) is not None or last is None
                      or short or ends)
            if starts:
                close()
            paragraph.append(text)
            last = value
    close()
    return blocks


def _join(lines: list[str]) -> str:
    """Wrapped lines of one paragraph as one: no space between Chinese characters."""
    out = lines[0]
    for line in lines[1:]:
        ascii_seam = out[-1:].isascii() and out[-1:].isalnum() and line[:1].isascii()
        out += (" " if ascii_seam else "") + line
    return out
