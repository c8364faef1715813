"""Staff-uploaded files → Markdown the chunker can cut: headings kept, tables as rows.

    convert(data, filename, limits) -> Converted     # or raises FileRefused

    sniff.py     what a file is, from its bytes (magic numbers, zip contents), never its name;
                 zip bombs and broken zips refused before any parser sees them
    structure.py what every format shares: 公文 heading numbering (一、 （一） 第一条),
                 a table as one line per row ("列名：值；列名：值"), the text limits
    pdf.py       PDF (pdfplumber: text in reading order, tables, headings by font size)
    docx.py      Word .docx (python-docx: body in order, heading styles, tables)
    xlsx.py      Excel .xlsx (openpyxl, read-only: a section per sheet, a line per row)
    html.py      HTML (BeautifulSoup + markdownify: scripts, navigation and styles dropped)
    text.py      Markdown and plain text (UTF-8, GB18030 as Chinese Windows saves it)

Why these libraries (measured on Chinese government documents made in the tests):
``docs/documents.md`` and ``scripts/compare_converters.py``. Every refusal is a
``FileRefused`` with a code and a Chinese reason for staff (``rag.texts.FILE_REFUSED``);
nothing is stored for a refused file. The libraries come with the ``rag`` extra and are
imported when a file of their format is converted.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from rag.formats.sniff import FORMATS, FileRefused, Limits, sniff

__all__ = ["FORMATS", "Converted", "FileRefused", "Limits", "convert", "sniff"]

log = logging.getLogger(__name__)
_BROKEN = ("pdf", "docx", "xlsx", "html")
# The libraries (import names) each format's converter needs, all in the rag extra.
LIBRARIES = {"pdf": ("pdfplumber", "pypdfium2"), "docx": ("docx", "lxml"),
             "xlsx": ("openpyxl",), "html": ("bs4", "lxml", "markdownify"), "markdown": ()}


@dataclass(frozen=True)
class Converted:
    """A converted file: its format, the Markdown text, and what was noticed on the way."""

    format: str  # one of FORMATS
    text: str
    pages: int = 1  # PDF pages, Excel sheets; 1 for the rest
    title: str = ""  # the file's own title when it has one (first heading, <title>)
    notes: tuple[str, ...] = field(default_factory=tuple)  # Chinese, for staff


def convert(data: bytes, filename: str = "", limits: Limits | None = None) -> Converted:
    """``data`` (the whole file) as Markdown; raises ``FileRefused`` with the reason."""
    limits = limits or Limits()
    kind = sniff(data, filename, limits)
    if kind == "pdf":
        from rag.formats.pdf import convert_pdf as run
    elif kind == "docx":
        from rag.formats.docx import convert_docx as run
    elif kind == "xlsx":
        from rag.formats.xlsx import convert_xlsx as run
    elif kind == "html":
        from rag.formats.html import convert_html as run
    else:
        from rag.formats.text import convert_text as run
    from rag.extra import require

    require(LIBRARIES[kind], what=f"converting {kind} files")  # MissingDependency
    try:
        converted = run(data, limits)
    except FileRefused:
        raise
    except (Exception, RecursionError, MemoryError) as exc:
        # The parsers meet hostile and broken files; what they raise for one that their
        # converter does not list yet is still a broken file, never a failed request.
        log.warning("the %s parser failed on %r: %s", kind, filename[:100], type(exc).__name__,
                    exc_info=True)
        raise FileRefused(f"broken_{kind}" if kind in _BROKEN else "no_text") from None
    if len(converted.text) > limits.max_chars:
        raise FileRefused("too_much_text", chars=limits.max_chars)
    if sum(1 for ch in converted.text if ch.isalnum()) < limits.min_chars:
        raise FileRefused("scanned_pdf" if kind == "pdf" else "no_text")
    return converted
