"""Chunking suited to Chinese: by heading, then paragraph, bounded, with a small overlap.

A document is cut at its Markdown headings first; a section's paragraphs (a
list counts as one paragraph) are packed into chunks of at most
``max_chars`` characters. A paragraph longer than that is cut at sentence
ends (。！？；; a run with no stop at all is hard cut), and a chunk that
continues the previous one in the same section starts with that chunk's
last sentence (when it is at most ``overlap`` characters) so a fact cut in
two is still found whole.

Chunks never cross headings; each one carries its heading so the search
text reads "title｜heading｜passage" without the passage repeating it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rag.documents import Document

MAX_CHARS = 300
OVERLAP = 80
# Bump when the chunking rules change: every document is then embedded again.
VERSION = "1"

_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
_SENTENCE = re.compile(r"(?<=[。！？；!?;])|(?<=\n)")


@dataclass(frozen=True)
class Chunk:
    chunk_id: str
    doc_id: str
    number: int
    title: str
    heading: str
    text: str
    businesses: tuple[str, ...]

    @property
    def search_text(self) -> str:
        """What is embedded and indexed for BM25: the passage in its context."""
        head = f"{self.title}｜{self.heading}" if self.heading else self.title
        return f"{head}\n{self.text}"


def chunk_document(doc: Document, *, max_chars: int = MAX_CHARS, overlap: int = OVERLAP) -> list[Chunk]:
    """Cut ``doc`` into chunks (see the module docstring)."""
    chunks: list[Chunk] = []
    for heading, paragraphs in _sections(doc):
        for text in _pack(paragraphs, max_chars, overlap):
            n = len(chunks)
            chunks.append(Chunk(
                chunk_id=f"{doc.doc_id}#{n:03d}", doc_id=doc.doc_id, number=n, title=doc.title,
                heading=heading, text=text, businesses=doc.businesses,
            ))
    return chunks


def _sections(doc: Document) -> list[tuple[str, list[str]]]:
    """(heading, paragraphs) pairs; the text before the first heading has heading ''."""
    sections: list[tuple[str, list[str]]] = [("", [])]
    block: list[str] = []

    def close_block() -> None:
        if block:
            sections[-1][1].append("\n".join(block).strip())
            block.clear()

    for line in doc.body.split("\n"):
        match = _HEADING.match(line)
        if match:
            close_block()
            title = match.group(2).strip()
            if len(match.group(1)) == 1 and title == doc.title:
                continue  # the H1 repeating the front-matter title
            sections.append((title, []))
        elif not line.strip():
            close_block()
        else:
            # A list item after a plain line still belongs to the same paragraph.
            block.append(line.rstrip())
    close_block()
    return [(h, [p for p in ps if p]) for h, ps in sections if any(ps)]


def _pack(paragraphs: list[str], max_chars: int, overlap: int) -> list[str]:
    """Pack paragraphs (long ones as their sentences) into chunks of at most ``max_chars``."""
    units: list[tuple[str, str]] = []  # (text, joiner before it): "\n" between paragraphs
    for p in paragraphs:
        if len(p) <= max_chars:
            units.append((p, "\n"))
        else:
            units.extend((s, "\n" if i == 0 else "") for i, s in enumerate(_sentences(p, max_chars)))
    chunks: list[str] = []
    current = ""
    for text, joiner in units:
        if not current:
            current = text
        elif len(current) + len(joiner) + len(text) <= max_chars:
            current = f"{current}{joiner}{text}"
        else:
            chunks.append(current)
            tail = _last_sentence(current)
            fits = tail and len(tail) <= overlap and len(tail) + len(joiner) + len(text) <= max_chars
            current = f"{tail}{joiner}{text}" if fits else text
    if current:
        chunks.append(current)
    return chunks


def _sentences(paragraph: str, max_chars: int) -> list[str]:
    """The sentences of a paragraph; a "sentence" longer than ``max_chars`` is hard cut."""
    out: list[str] = []
    for s in _SENTENCE.split(paragraph):
        s = s.strip()
        while len(s) > max_chars:
            out.append(s[:max_chars])
            s = s[max_chars:]
        if s:
            out.append(s)
    return out


def _last_sentence(text: str) -> str:
    sentences = [s.strip() for s in _SENTENCE.split(text) if s and s.strip()]
    return sentences[-1] if len(sentences) > 1 else ""
