"""The documents staff upload: originals, converted text, metadata and versions (SQLite).

    library = Library(settings.documents_dir)        # data/documents/
    draft = library.add(original, filename, converted, meta, actor)        # version 1, a draft
    draft = library.add(..., doc_id=draft.doc_id)                          # a replacement draft
    library.mark_published(doc_id, version, actor)   # after the knowledge base indexed it
    library.delete(doc_id)                           # every version and original

A document has an id (``doc-`` and 8 hex digits, never a built-in file name) and
versions 1, 2, …; each version keeps its original file (``originals/<doc_id>/v<n>.<ext>``),
the Markdown converted from it and its metadata (title, source, as-of date, businesses).
A version is a ``draft`` (uploaded, shown to staff, not searched), ``published`` (the
one the knowledge base searches: at most one per document), ``superseded`` (published
before, replaced by a newer one; kept) or ``withdrawn`` (was published, then taken out).
A new upload to a document that has a draft replaces that draft.

``published()`` is what the knowledge base indexes besides its built-in directory
(``KnowledgeBase(library=...)``). Indexing is the knowledge base's job; this module
only records. Writes are serialised by SQLite (one file, WAL); originals are written
to a temporary name and renamed, so a failed upload leaves nothing behind.
"""

from __future__ import annotations

import json
import logging
import secrets
import shutil
import sqlite3
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from rag.documents import Document, parse_document

log = logging.getLogger(__name__)

STATES = ("draft", "published", "superseded", "withdrawn")
_SCHEMA = """
CREATE TABLE IF NOT EXISTS versions (
    doc_id TEXT NOT NULL,
    version INTEGER NOT NULL,
    state TEXT NOT NULL,
    title TEXT NOT NULL,
    source TEXT NOT NULL,
    as_of TEXT NOT NULL,
    businesses TEXT NOT NULL,
    filename TEXT NOT NULL,
    format TEXT NOT NULL,
    original TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    size INTEGER NOT NULL,
    pages INTEGER NOT NULL,
    text TEXT NOT NULL,
    uploaded_by TEXT NOT NULL,
    uploaded_at REAL NOT NULL,
    published_by TEXT,
    published_at REAL,
    PRIMARY KEY (doc_id, version)
);
"""


@dataclass(frozen=True)
class Meta:
    """What staff say about a document when they upload it."""

    title: str
    source: str
    as_of: str  # YYYY-MM or YYYY-MM-DD
    businesses: tuple[str, ...] = ()


@dataclass(frozen=True)
class Version:
    doc_id: str
    version: int
    state: str
    meta: Meta
    filename: str
    format: str
    original: str  # path relative to the library's root
    sha256: str  # of the original file
    size: int
    pages: int
    text: str  # the converted Markdown
    uploaded_by: str
    uploaded_at: float
    published_by: str | None = None
    published_at: float | None = None

    def document(self) -> Document:
        """This version as a knowledge document (front matter + the converted text)."""
        return as_document(self.doc_id, self.meta, self.text)


@dataclass(frozen=True)
class Record:
    """A document and its versions, newest first."""

    doc_id: str
    versions: tuple[Version, ...]

    @property
    def latest(self) -> Version:
        return self.versions[0]

    @property
    def live(self) -> Version | None:
        return next((v for v in self.versions if v.state == "published"), None)

    @property
    def draft(self) -> Version | None:
        return next((v for v in self.versions if v.state == "draft"), None)


def as_document(doc_id: str, meta: Meta, text: str) -> Document:
    """A knowledge ``Document``; raises ``DocumentError`` for a bad title, date or body."""
    front = json.dumps({"title": meta.title, "businesses": list(meta.businesses),
                        "as_of": meta.as_of, "source": meta.source}, ensure_ascii=False)
    # JSON is YAML: the front matter needs no quoting rules of its own.
    return parse_document(f"---\n{front}\n---\n{text}", doc_id=doc_id, file=doc_id)


class Library:
    """The uploaded documents under ``root`` (``library.db`` and ``originals/``)."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self._local = threading.local()
        self._ready = False

    # -- reading ------------------------------------------------------------------

    def records(self) -> list[Record]:
        """Every document, the most recently changed first."""
        rows = self._query("SELECT * FROM versions ORDER BY doc_id, version DESC")
        by_doc: dict[str, list[Version]] = {}
        for row in rows:
            by_doc.setdefault(row["doc_id"], []).append(_version(row))
        records = [Record(d, tuple(vs)) for d, vs in by_doc.items()]
        return sorted(records, key=lambda r: max(v.published_at or v.uploaded_at
                                                 for v in r.versions), reverse=True)

    def record(self, doc_id: str) -> Record | None:
        rows = self._query("SELECT * FROM versions WHERE doc_id = ? ORDER BY version DESC",
                           (doc_id,))
        return Record(doc_id, tuple(_version(r) for r in rows)) if rows else None

    def version(self, doc_id: str, version: int) -> Version | None:
        rows = self._query("SELECT * FROM versions WHERE doc_id = ? AND version = ?",
                           (doc_id, version))
        return _version(rows[0]) if rows else None

    def published(self) -> list[Document]:
        """The published version of every document, as knowledge documents."""
        if not (self.root / "library.db").is_file():
            return []  # nothing uploaded yet: no file is made for asking
        rows = self._query("SELECT * FROM versions WHERE state = 'published' ORDER BY doc_id")
        return [_version(r).document() for r in rows]

    def original_path(self, version: Version) -> Path:
        return self.root / version.original

    # -- writing ------------------------------------------------------------------

    def add(self, original: bytes, filename: str, fmt: str, text: str, pages: int, meta: Meta,
            actor: str, *, doc_id: str | None = None) -> Version:
        """Record an upload as a draft: a new document, or (``doc_id``) a new version of
        one (replacing its draft, if it has one). ``DocumentError`` for bad metadata,
        ``KeyError`` for an unknown ``doc_id``."""
        import hashlib

        new = doc_id is None
        doc_id = doc_id or f"doc-{secrets.token_hex(4)}"
        as_document(doc_id, meta, text)  # the metadata and text make a valid document
        with self._write() as db:
            rows = db.execute("SELECT version, state, original FROM versions WHERE doc_id = ?",
                              (doc_id,)).fetchall()
            if not new and not rows:
                raise KeyError(doc_id)
            for row in rows:
                if row["state"] == "draft":  # replaced by this upload
                    db.execute("DELETE FROM versions WHERE doc_id = ? AND version = ?",
                               (doc_id, row["version"]))
                    self._remove_file(row["original"])
            number = max((r["version"] for r in rows), default=0) + 1
            suffix = Path(filename).suffix.lower()[:10]
            relative = f"originals/{doc_id}/v{number}{suffix}"
            self._write_file(relative, original)
            try:
                db.execute(
                    "INSERT INTO versions (doc_id, version, state, title, source, as_of, "
                    "businesses, filename, format, original, sha256, size, pages, text, "
                    "uploaded_by, uploaded_at) VALUES (?, ?, 'draft', ?, ?, ?, ?, ?, ?, ?, ?, ?, "
                    "?, ?, ?, ?)",
                    (doc_id, number, meta.title, meta.source, meta.as_of,
                     json.dumps(list(meta.businesses)), Path(filename).name[:200], fmt, relative,
                     hashlib.sha256(original).hexdigest(), len(original), pages, text, actor,
                     time.time()),
                )
            except sqlite3.Error:
                self._remove_file(relative)
                raise
        found = self.version(doc_id, number)
        assert found is not None
        return found

    def mark_published(self, doc_id: str, version: int, actor: str) -> None:
        """``version`` is the one searched now; the one before is ``superseded``."""
        with self._write() as db:
            db.execute("UPDATE versions SET state = 'superseded' WHERE doc_id = ? AND "
                       "state = 'published' AND version != ?", (doc_id, version))
            changed = db.execute(
                "UPDATE versions SET state = 'published', published_by = ?, published_at = ? "
                "WHERE doc_id = ? AND version = ?", (actor, time.time(), doc_id, version))
            if changed.rowcount != 1:
                raise KeyError(f"{doc_id} v{version}")

    def mark_withdrawn(self, doc_id: str) -> None:
        with self._write() as db:
            db.execute("UPDATE versions SET state = 'withdrawn' WHERE doc_id = ? AND "
                       "state = 'published'", (doc_id,))

    def discard(self, doc_id: str, version: int) -> None:
        """Remove a draft (a published or older version stays: ``KeyError``)."""
        with self._write() as db:
            row = db.execute("SELECT original FROM versions WHERE doc_id = ? AND version = ? "
                             "AND state = 'draft'", (doc_id, version)).fetchone()
            if row is None:
                raise KeyError(f"{doc_id} v{version}")
            db.execute("DELETE FROM versions WHERE doc_id = ? AND version = ?", (doc_id, version))
        self._remove_file(row["original"])

    def delete(self, doc_id: str) -> None:
        """Remove the document: every version and original (the caller unindexes it first)."""
        with self._write() as db:
            db.execute("DELETE FROM versions WHERE doc_id = ?", (doc_id,))
        shutil.rmtree(self.root / "originals" / doc_id, ignore_errors=True)

    # -- SQLite and files ---------------------------------------------------------

    def _db(self) -> sqlite3.Connection:
        db = getattr(self._local, "db", None)
        if db is None:
            self.root.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(self.root / "library.db", timeout=10.0, isolation_level=None)
            db.row_factory = sqlite3.Row
            db.execute("PRAGMA journal_mode=WAL")
            db.executescript(_SCHEMA)
            self._local.db = db
        return db

    def _query(self, sql: str, params: Sequence[object] = ()) -> list[sqlite3.Row]:
        return self._db().execute(sql, params).fetchall()

    def _write(self):
        return _Transaction(self._db())

    def _write_file(self, relative: str, data: bytes) -> None:
        path = self.root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(path.name + ".part")
        partial.write_bytes(data)
        partial.replace(path)

    def _remove_file(self, relative: str) -> None:
        (self.root / relative).unlink(missing_ok=True)


class _Transaction:
    """``with``: BEGIN IMMEDIATE … COMMIT (ROLLBACK on an exception)."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def __enter__(self) -> sqlite3.Connection:
        self.db.execute("BEGIN IMMEDIATE")
        return self.db

    def __exit__(self, kind, value, traceback) -> None:
        self.db.execute("ROLLBACK" if kind else "COMMIT")


def _version(row: sqlite3.Row) -> Version:
    meta = Meta(row["title"], row["source"], row["as_of"], tuple(json.loads(row["businesses"])))
    return Version(
        doc_id=row["doc_id"], version=row["version"], state=row["state"], meta=meta,
        filename=row["filename"], format=row["format"], original=row["original"],
        sha256=row["sha256"], size=row["size"], pages=row["pages"], text=row["text"],
        uploaded_by=row["uploaded_by"], uploaded_at=row["uploaded_at"],
        published_by=row["published_by"], published_at=row["published_at"],
    )
