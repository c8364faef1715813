"""Ingest time per document page: convert, chunk, embed and index an uploaded document.

    PYTHONPATH=. python scripts/bench_documents.py [--pages 20] [--data /tmp/bench-documents]

Makes the notice of ``tests/documents/govdocs.py`` as a PDF of about ``--pages`` pages
(its sections repeated, each repetition numbered so its chunks differ) and a DOCX of the
same text, then for each: conversion time, chunks, publish time (delete + embed + insert
+ flush, the default embedder, the shipped corpus in a fresh Milvus Lite directory) and
both per page. The first publish also loads the embedder; it is reported apart.
"""

from __future__ import annotations

import argparse
import io
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rag import build_knowledge  # noqa: E402
from rag.formats import convert  # noqa: E402
from rag.library import Meta  # noqa: E402
from si_agent.config.settings import Settings  # noqa: E402
from tests.documents import govdocs  # noqa: E402


def long_pdf(pages: int) -> bytes:
    from reportlab.lib.pagesizes import A4
    from reportlab.lib.styles import ParagraphStyle
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.cidfonts import UnicodeCIDFont
    from reportlab.platypus import PageBreak, Paragraph, SimpleDocTemplate

    pdfmetrics.registerFont(UnicodeCIDFont("STSong-Light"))
    body = ParagraphStyle("b", fontName="STSong-Light", fontSize=12, leading=20, wordWrap="CJK")
    head = ParagraphStyle("h", parent=body, fontSize=15)
    story = []
    for n in range(pages):
        for heading, paragraphs in govdocs.SECTIONS:
            story.append(Paragraph(f"{heading}（第{n + 1}部分）", head))
            story += [Paragraph(f"{p}本部分编号{n + 1}。" * 3, body) for p in paragraphs]
        story.append(PageBreak())
    out = io.BytesIO()
    SimpleDocTemplate(out, pagesize=A4).build(story)
    return out.getvalue()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=20)
    parser.add_argument("--data", type=Path, default=Path("/tmp/bench-documents"))
    args = parser.parse_args()
    shutil.rmtree(args.data, ignore_errors=True)
    kb = build_knowledge(Settings(data_dir=args.data))
    started = time.perf_counter()
    assert kb.status()["ok"]
    print(f"knowledge base built in {time.perf_counter() - started:.1f} s")
    warm = convert(govdocs.docx(), "warm.docx")
    draft = kb.library.add(b"x", "warm.docx", warm.format, warm.text, 1,
                           Meta("预热", "bench", "2026-01"), "bench")
    started = time.perf_counter()
    kb.publish(draft.document())
    print(f"first publish (loads the embedder): {time.perf_counter() - started:.2f} s")
    kb.withdraw(draft.doc_id)
    print("| file | pages | convert s | chunks | publish s | convert ms/page | publish ms/page |")
    print("|---|---|---|---|---|---|---|")
    for name, data in (("notice.pdf", long_pdf(args.pages)), ("notice.docx", govdocs.docx()),
                       ("notice-2p.pdf", govdocs.pdf())):
        started = time.perf_counter()
        converted = convert(data, name)
        converting = time.perf_counter() - started
        draft = kb.library.add(data, name, converted.format, converted.text, converted.pages,
                               Meta(f"基准 {name}", "bench", "2026-01"), "bench")
        report = kb.publish(draft.document())
        pages = converted.pages
        print(f"| {name} | {pages} | {converting:.2f} | {report.chunks} | {report.seconds:.2f} | "
              f"{converting / pages * 1000:.0f} | {report.seconds / pages * 1000:.0f} |")
        kb.withdraw(draft.doc_id)


if __name__ == "__main__":
    main()
