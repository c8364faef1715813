"""HTML → Markdown with BeautifulSoup (lxml parser) and markdownify.

The encoding comes from the page (``<meta charset>``, a BOM) or is guessed by
BeautifulSoup's UnicodeDammit (GB18030 pages of older bureau sites included).
Scripts, styles, forms and the page's navigation, header and footer are dropped; when
the page marks its main content (``<main>``, ``<article>``, a ``#content`` block) only
that is read. Headings stay headings, lists stay lists, tables become a line per row.
"""

from __future__ import annotations

import re

from rag.formats import Converted
from rag.formats.sniff import FileRefused, Limits
from rag.formats.structure import markdown, table_lines

_DROPPED = ("script", "style", "noscript", "template", "form", "iframe", "nav", "header",
            "footer", "aside", "svg", "button", "select")
_MAIN = ("main", "article", "#content", ".content", "#main", ".article", ".TRS_Editor")


def convert_html(data: bytes, limits: Limits) -> Converted:
    from bs4 import BeautifulSoup

    try:
        soup = BeautifulSoup(data, "lxml")
    except (ValueError, TypeError, RecursionError):
        raise FileRefused("broken_html") from None
    title = soup.title.get_text(" ", strip=True) if soup.title else ""
    for tag in soup(_DROPPED):
        tag.decompose()
    root = next((found for sel in _MAIN if (found := soup.select_one(sel))), None)
    root = root or soup.body or soup
    try:
        text = _Converter(heading_style="ATX", bullets="-", strip=["a", "img"]).convert_soup(root)
    except RecursionError:  # nested thousands deep
        raise FileRefused("broken_html") from None
    return Converted("html", markdown(_blocks(text)), title=title)


def _converter_base():
    from markdownify import MarkdownConverter

    return MarkdownConverter


class _Converter(_converter_base()):  # type: ignore[misc]
    """markdownify, with tables as a line per row (``structure.table_lines``)."""

    def convert_table(self, el, text, parent_tags):
        rows = [[cell.get_text(" ", strip=True) for cell in tr.find_all(["th", "td"])]
                for tr in el.find_all("tr")]
        return "\n\n" + "\n".join(table_lines(rows)) + "\n\n"


def _blocks(text: str):
    for block in re.split(r"\n\s*\n", text):
        block = block.strip()
        if not block:
            continue
        heading = re.match(r"^(#{1,6})\s+(.+)$", block)
        if heading and "\n" not in block:
            yield (f"h{len(heading.group(1))}", heading.group(2).strip("# "))
        elif block.startswith(("- ", "* ", "1. ")):
            yield ("table", [line.strip() for line in block.splitlines() if line.strip()])
        else:
            yield ("p", " ".join(line.strip() for line in block.splitlines()))
