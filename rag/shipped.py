"""Shipped vectors: the corpus's chunk embeddings, committed next to the corpus.

A knowledge directory may hold ``_embeddings.json`` (a manifest: the embedder
and its version, the vector size, one content hash per row) and
``_embeddings.npy`` (the rows, float16). Ingest takes a chunk's vector from
there when its hash is listed and the embedder is the one that made the file;
it embeds only the chunks that are new or changed. A different embedder (or
version) ignores the file. So a new data dir is filled by copying vectors, not
by running the model: seconds, not a minute.

A chunk's key is the SHA-256 of what is embedded (``Chunk.search_text``): the
chunking rules are covered because they decide that text.

``si-agent kb embed-ship`` (``write``) brings the files in line with the corpus,
re-using the rows that are still current; ``tests/rag/test_shipped_vectors.py``
fails when the committed files are out of date.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from rag.chunking import Chunk

if TYPE_CHECKING:
    import numpy as np

    from rag.embedders import Embedder

log = logging.getLogger(__name__)

MANIFEST = "_embeddings.json"
VECTORS = "_embeddings.npy"
REGENERATE = "si-agent kb embed-ship"


def chunk_key(chunk: Chunk) -> str:
    """The content hash a chunk's vector is filed under."""
    return hashlib.sha256(chunk.search_text.encode("utf-8")).hexdigest()


def embedder_id(embedder: Embedder) -> str:
    """The embedder's name and, when it has one, its version: what made a vector."""
    version = getattr(embedder, "version", None)
    return f"{embedder.name} {version}" if version else embedder.name


class ShippedVectors:
    """The vectors of one knowledge directory, by chunk key, for one embedder."""

    def __init__(self, embedder: str, dim: int, keys: Sequence[str], vectors: np.ndarray) -> None:
        self.embedder = embedder
        self.dim = dim
        self.keys = tuple(keys)
        self.vectors = vectors  # float16, one row per key
        self._rows = {k: i for i, k in enumerate(self.keys)}

    def __len__(self) -> int:
        return len(self.keys)

    def get(self, chunk: Chunk) -> np.ndarray | None:
        """The chunk's shipped vector, or None when it is not shipped."""
        row = self._rows.get(chunk_key(chunk))
        return None if row is None else self.vectors[row]


def load(directory: Path, embedder: Embedder | None = None) -> ShippedVectors | None:
    """The shipped vectors of ``directory``; None when there are none, they are
    unreadable, or they were made by another embedder than ``embedder``."""
    import numpy as np

    directory = Path(directory)
    manifest_path, vectors_path = directory / MANIFEST, directory / VECTORS
    if not manifest_path.is_file() or not vectors_path.is_file():
        return None
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
        vectors = np.load(vectors_path, allow_pickle=False)
        shipped = ShippedVectors(str(manifest["embedder"]), int(manifest["dim"]),
                                 tuple(manifest["chunks"]), vectors)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        log.warning("ignoring the shipped vectors in %s: %s", directory, exc)
        return None
    if vectors.shape != (len(shipped.keys), shipped.dim):
        log.warning("ignoring the shipped vectors in %s: %s rows for %d chunks", directory,
                    vectors.shape, len(shipped.keys))
        return None
    if embedder is not None and shipped.embedder != embedder_id(embedder):
        log.info("shipped vectors in %s are by %s, not %s: not used", directory,
                 shipped.embedder, embedder_id(embedder))
        return None
    return shipped


def vectors_for(chunks: Sequence[Chunk], embedder: Embedder,
                shipped: ShippedVectors | None) -> tuple[np.ndarray, int]:
    """One unit vector per chunk: the shipped one when there is one, else embedded now.

    Returns ``(vectors, how many were embedded)``.
    """
    import numpy as np

    from rag.embedders import normalise

    rows: list[np.ndarray | None] = [shipped.get(c) if shipped else None for c in chunks]
    missing = [i for i, r in enumerate(rows) if r is None]
    if missing:
        fresh = embedder.embed([chunks[i].search_text for i in missing])
        for i, vector in zip(missing, fresh, strict=True):
            rows[i] = vector
    if not chunks:
        return np.zeros((0, embedder.dim), dtype=np.float32), 0
    return normalise(np.vstack([np.asarray(r, dtype=np.float32) for r in rows])), len(missing)


def write(directory: Path, embedder: Embedder) -> tuple[int, int]:
    """Bring ``directory``'s shipped vectors in line with its documents.

    Rows still current are kept; new and changed chunks are embedded. Returns
    ``(kept, embedded)``. Raises ``DocumentError`` on a bad document.
    """
    import numpy as np

    from rag.chunking import chunk_document
    from rag.documents import load_documents

    directory = Path(directory)
    chunks = [c for d in load_documents(directory) for c in chunk_document(d)]
    unique = list({chunk_key(c): c for c in chunks}.items())  # same text, one row
    vectors, embedded = vectors_for([c for _, c in unique], embedder, load(directory, embedder))
    np.save(directory / VECTORS, vectors.astype(np.float16), allow_pickle=False)
    manifest = {
        "about": f"vectors of the chunks of this directory's documents; regenerate: {REGENERATE}",
        "embedder": embedder_id(embedder),
        "dim": int(vectors.shape[1]),
        "dtype": "float16",
        "chunks": [k for k, _ in unique],
    }
    (directory / MANIFEST).write_text(json.dumps(manifest, ensure_ascii=False, indent=0) + "\n",
                                      encoding="utf-8")
    return len(unique) - embedded, embedded
