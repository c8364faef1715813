"""Measure candidate converters per format on Chinese policy notices made here.

    PYTHONPATH=. python scripts/compare_converters.py [--chromium]

The documents are ``tests/documents/govdocs.py``'s notice (title, 文号, numbered
headings 一、二、三、, a table of rates, page numbers, a bureau page's navigation) as
DOCX, PDF (reportlab with the Adobe-GB1 CID font; with ``--chromium`` also printed by
Chromium with Noto CJK embedded, as a browser or Word export embeds its fonts), XLSX,
HTML. For each candidate library it reports:

- facts: how many of the notice's key sentences come out whole (as-is / after joining
  wrapped lines): a sentence cut by a line break is cut in the chunker too;
- order: those sentences in the document's order;
- headings: the three section headings marked as headings (Markdown ``#``);
- table: a rate table row with its column headers ("缴费年限：10年以上；…") or at
  least its cells on one line;
- noise: page numbers ("- 1 -") or the page's navigation/footer left in the text;
- ms: median of 5 conversions.

Candidates whose library is not installed are skipped (the conversion libraries are in
the rag extra; the other candidates are installed by hand to measure them).
"""

from __future__ import annotations

import argparse
import io
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.documents import govdocs  # noqa: E402

ROW_CELLS = ("10年以上", "最长24个月", "2120")


def ours(ext: str) -> Callable[[bytes], str]:
    from rag.formats import convert

    return lambda data: convert(data, f"x.{ext}").text


def pypdf_text(data: bytes) -> str:
    import pypdf

    return "\n".join(p.extract_text() or "" for p in pypdf.PdfReader(io.BytesIO(data)).pages)


def pdfminer_text(data: bytes) -> str:
    from pdfminer.high_level import extract_text

    return extract_text(io.BytesIO(data))


def pdfium_text(data: bytes) -> str:
    import pypdfium2

    pdf = pypdfium2.PdfDocument(data)
    return "\n".join(page.get_textpage().get_text_range() for page in pdf)


def mammoth_markdown(data: bytes) -> str:
    import mammoth
    from markdownify import markdownify

    return markdownify(mammoth.convert_to_html(io.BytesIO(data)).value, heading_style="ATX")


def docx2python_text(data: bytes) -> str:
    from docx2python import docx2python

    with docx2python(io.BytesIO(data)) as result:
        return result.text


def html2text_markdown(data: bytes) -> str:
    import html2text

    converter = html2text.HTML2Text()
    converter.body_width = 0
    return converter.handle(data.decode("gb18030"))


def markdownify_plain(data: bytes) -> str:
    from markdownify import markdownify

    return markdownify(data.decode("gb18030"), heading_style="ATX")


def pandas_text(data: bytes) -> str:
    import pandas

    sheets = pandas.read_excel(io.BytesIO(data), sheet_name=None)
    return "\n\n".join(f"{name}\n{frame.to_string()}" for name, frame in sheets.items())


CANDIDATES: dict[str, list[tuple[str, Callable[[bytes], str]]]] = {
    "pdf": [("pdfplumber + rules (ours)", ours("pdf")), ("pypdf", pypdf_text),
            ("pdfminer.six", pdfminer_text), ("pypdfium2", pdfium_text)],
    "docx": [("python-docx + rules (ours)", ours("docx")), ("mammoth → markdownify",
             mammoth_markdown), ("docx2python", docx2python_text)],
    "xlsx": [("openpyxl + rules (ours)", ours("xlsx")), ("pandas.read_excel", pandas_text)],
    "html": [("bs4 + markdownify + rules (ours)", ours("html")), ("html2text", html2text_markdown),
             ("markdownify alone", markdownify_plain)],
}


def chromium_pdf() -> bytes:
    """The HTML notice printed to PDF by Chromium (fonts embedded)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as driver:
        return govdocs.chromium_pdf(driver)


def score(text: str) -> dict[str, str]:
    joined = "".join(line.strip() for line in text.splitlines())
    whole = sum(f in text for f in govdocs.FACTS)
    rejoined = sum(f in joined for f in govdocs.FACTS)
    positions = [joined.find(f) for f in govdocs.FACTS]
    ordered = all(p >= 0 for p in positions) and positions == sorted(positions)
    headings = sum(any(line.lstrip().startswith("#") and h in line for line in text.splitlines())
                   for h, _ in govdocs.SECTIONS)
    if govdocs.TABLE_ROW in text:
        table = "row with headers"
    elif any(all(c in line for c in ROW_CELLS) for line in text.splitlines()):
        table = "cells on one line"
    else:
        table = "cells apart"
    noise = [n for n, bad in (("page numbers", "- 1 -" in text),
                              ("navigation", "政策法规" in text or "ICP" in text)) if bad]
    return {"facts": f"{whole}/{rejoined} of {len(govdocs.FACTS)}", "order": "yes" if ordered else
            "no", "headings": f"{headings}/3", "table": table, "noise": ", ".join(noise) or "—"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chromium", action="store_true", help="also a Chromium-printed PDF")
    args = parser.parse_args()
    files = {"pdf": [("PDF (reportlab, CID font)", govdocs.pdf())],
             "docx": [("DOCX (python-docx)", govdocs.docx())],
             "xlsx": [("XLSX (openpyxl)", govdocs.xlsx())],
             "html": [("HTML (GB18030 bureau page)", govdocs.html())]}
    if args.chromium:
        files["pdf"].append(("PDF (Chromium, Noto CJK embedded)", chromium_pdf()))
    print("| file | candidate | facts whole (as-is/joined) | order | headings | table | noise | ms |")
    print("|---|---|---|---|---|---|---|---|")
    for fmt, samples in files.items():
        for label, data in samples:
            for name, run in CANDIDATES[fmt]:
                try:
                    text = run(data)
                except ImportError as exc:
                    print(f"| {label} | {name} | not installed ({exc.name}) | | | | | |")
                    continue
                times = []
                for _ in range(5):
                    started = time.perf_counter()
                    run(data)
                    times.append((time.perf_counter() - started) * 1000)
                s = score(text)
                print(f"| {label} | {name} | {s['facts']} | {s['order']} | {s['headings']} | "
                      f"{s['table']} | {s['noise']} | {statistics.median(times):.0f} |")


if __name__ == "__main__":
    main()
