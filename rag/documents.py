"""Knowledge documents: Markdown files with YAML front matter.

A document looks like::

    ---
    title: 社保关系转移接续办理指南
    businesses: [social_transfer]      # business ids it helps with; [] for general policy
    as_of: 2025-06                     # when its facts were checked: YYYY-MM or YYYY-MM-DD
    source: 本文根据《社会保险法》……整理，仅供参考，以当地经办机构为准。
    ---
    # 社保关系转移接续办理指南
    ...

The document id is the file name without ``.md``; its hash covers the whole
file, so any edit (text or tags) re-ingests it.
"""

from __future__ import annotations

import datetime
import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import yaml

from rag.errors import DocumentError

_FRONT = re.compile(r"\A---[ \t]*\n(.*?)\n---[ \t]*\n", re.S)
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,100}$")
_AS_OF = re.compile(r"^(\d{4})-(\d{2})(?:-(\d{2}))?$")


@dataclass(frozen=True)
class Document:
    doc_id: str
    title: str
    businesses: tuple[str, ...]
    source: str
    body: str
    sha256: str
    as_of: str = ""  # "2025-06" or "2025-06-30"
    path: Path | None = None


def parse_document(text: str, *, doc_id: str, file: str = "<text>") -> Document:
    """One document from its Markdown text; raises ``DocumentError``."""
    if not _ID.match(doc_id):
        raise DocumentError(file, 1, f"file name {doc_id!r} is not a valid document id")
    match = _FRONT.match(text)
    if not match:
        raise DocumentError(file, 1, "missing YAML front matter between '---' lines")
    try:
        meta = yaml.safe_load(match.group(1)) or {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise DocumentError(file, (mark.line + 2) if mark else 1, f"front matter: {exc}") from None
    if not isinstance(meta, dict):
        raise DocumentError(file, 2, "front matter must be a mapping")
    title = meta.get("title")
    if not isinstance(title, str) or not title.strip():
        raise DocumentError(file, 2, "front matter needs a non-empty 'title'")
    tags = meta.get("businesses")
    if not isinstance(tags, list) or not all(isinstance(t, str) and t for t in tags):
        raise DocumentError(file, 2, "front matter needs 'businesses': a list of business ids ([] for none)")
    source = meta.get("source")
    if not isinstance(source, str) or not source.strip():
        raise DocumentError(file, 2, "front matter needs a 'source' note")
    as_of = _as_of(meta.get("as_of"), file)
    body = text[match.end():].strip()
    if not body:
        raise DocumentError(file, text[: match.end()].count("\n") + 1, "the document has no body")
    return Document(
        doc_id=doc_id, title=title.strip(), businesses=tuple(tags), source=source.strip(),
        body=body, sha256=hashlib.sha256(text.encode("utf-8")).hexdigest(), as_of=as_of,
    )


def _as_of(value: object, file: str) -> str:
    """The as-of date as text ("2025-06" or "2025-06-30"); YAML may have read it as a date."""
    if isinstance(value, datetime.date):
        return value.isoformat()
    text = str(value).strip() if value is not None else ""
    m = _AS_OF.match(text)
    if not m or not 1 <= int(m.group(2)) <= 12:
        raise DocumentError(file, 2, "front matter needs 'as_of': when its facts were checked, "
                            f"YYYY-MM or YYYY-MM-DD (got {value!r})")
    return text


def load_document(path: Path) -> Document:
    text = path.read_text(encoding="utf-8").replace("\r\n", "\n")
    doc = parse_document(text, doc_id=path.stem, file=str(path))
    return Document(**{**doc.__dict__, "path": path})


def load_documents(directory: Path) -> list[Document]:
    """Every ``*.md`` under ``directory`` (sorted); raises ``DocumentError`` on the first bad one."""
    directory = Path(directory)
    if not directory.is_dir():
        raise DocumentError(str(directory), None, "knowledge directory not found")
    docs = [load_document(p) for p in sorted(directory.rglob("*.md"))]
    check_unique(docs)
    return docs


def check_unique(docs: Iterable[Document]) -> None:
    """Raise ``DocumentError`` when two documents share an id."""
    seen: dict[str, Path | None] = {}
    for d in docs:
        if d.doc_id in seen:
            raise DocumentError(str(d.path), 1, f"document id {d.doc_id!r} also used by {seen[d.doc_id]}")
        seen[d.doc_id] = d.path
