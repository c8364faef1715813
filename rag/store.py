"""The Milvus store: one collection of chunks with a dense vector and a BM25 field.

The same code serves Milvus Lite (a local ``*.db`` directory, the default
``data/kb.db``) and a Milvus server (``SI_MILVUS_URI`` + ``SI_MILVUS_TOKEN``):

- ``dense``: the embedder's vector (COSINE, HNSW);
- ``sparse``: filled by Milvus's BM25 function from ``text``, analysed with
  the ``jieba`` tokenizer (Milvus full-text search);
- searches are dense-only, BM25-only or hybrid (both, fused with RRF).

Milvus quirks handled here: a reopened collection comes back released, so
it is loaded before searching; Milvus Lite reports BM25 scores negated (smaller
is better) where a server reports them positive, so their absolute value is
the score (larger is better).

Every pymilvus / gRPC / file-system failure becomes ``KnowledgeUnavailable``.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from rag.chunking import Chunk
from rag.errors import KnowledgeLocked, KnowledgeUnavailable
from rag.extra import INSTALL
from rag.stopwords import STOP_WORDS

if TYPE_CHECKING:
    import numpy as np

log = logging.getLogger(__name__)

_INSTALL = f"the knowledge base needs pymilvus: {INSTALL} (pymilvus[milvus-lite], milvus-lite[chinese])"
MODES = ("hybrid", "dense", "bm25")
RRF_K = 60
TEXT_MAX = 8192
MAX_DOCUMENTS = 16384  # Milvus's largest query result
# HNSW, explicitly (AUTOINDEX means HNSW in Milvus Lite too, but with ef 64, which at
# 10,000 chunks returned only 95% of the exact top 10; ef 128 returns 99.9%).
HNSW_BUILD = {"M": 16, "efConstruction": 200}
HNSW_EF = 128
ANALYZER = {"tokenizer": "jieba", "filter": [{"type": "stop", "stop_words": list(STOP_WORDS)}]}
_FIELDS = ["doc_id", "doc_hash", "number", "title", "heading", "content", "businesses", "embedder"]


@dataclass(frozen=True)
class Hit:
    """One retrieved chunk. ``score`` is the mode's own: RRF, cosine or BM25 (larger is better)."""

    chunk_id: str
    doc_id: str
    title: str
    heading: str
    text: str
    businesses: tuple[str, ...]
    score: float
    cosine: float | None = None


MILVUS_LOCK = "LOCK"  # the file a Milvus Lite directory is flock-ed through while open


def lite_held(location: Path) -> bool:
    """Whether another process has the Milvus Lite directory ``location`` open."""
    lock = location / MILVUS_LOCK
    if not lock.is_file():
        return False
    import fcntl

    try:
        fd = os.open(lock, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    finally:
        os.close(fd)


class MilvusStore:
    """A chunk collection in Milvus (Lite or server); opened lazily, thread-safe."""

    def __init__(self, uri: str, collection: str, *, token: str | None = None,
                 timeout: float = 10.0) -> None:
        self.uri = str(uri)
        self.collection = collection
        self.token = token
        self.timeout = timeout
        self._client = None
        self._loaded = False
        self._lock = threading.RLock()

    @property
    def is_lite(self) -> bool:
        return self.uri.endswith(".db")

    @property
    def location(self) -> str:
        return f"{self.uri} (collection {self.collection})"

    # -- connection -----------------------------------------------------------

    @contextmanager
    def _guard(self, action: str) -> Iterator[None]:
        """Turn Milvus and I/O failures into ``KnowledgeUnavailable``."""
        try:
            from pymilvus.exceptions import MilvusException
        except ImportError as exc:
            raise KnowledgeUnavailable(self.location, _INSTALL) from exc
        import grpc

        try:
            yield
        except MilvusException as exc:
            self._loaded = False
            raise KnowledgeUnavailable(self.location, f"{action}: {exc.message}") from exc
        except (grpc.RpcError, OSError) as exc:
            self._loaded = False
            raise KnowledgeUnavailable(self.location, f"{action}: {exc}") from exc

    def client(self):
        with self._lock:
            if self._client is None:
                try:
                    from pymilvus import MilvusClient
                except ImportError as exc:
                    raise KnowledgeUnavailable(self.location, _INSTALL) from exc
                if self.is_lite:
                    # Milvus Lite's in-process gRPC server logs a traceback for a call
                    # it does not implement (AllocTimestamp) and pymilvus retries; harmless.
                    logging.getLogger("grpc._server").setLevel(logging.CRITICAL)
                    self._prepare_lite()
                with self._guard("connect"):
                    self._client = MilvusClient(uri=self.uri, token=self.token or "",
                                                timeout=self.timeout)
            return self._client

    def _prepare_lite(self) -> None:
        path = Path(self.uri)
        if path.exists() and not path.is_dir():
            raise KnowledgeUnavailable(self.location, "not a Milvus Lite database (a plain file)")
        if path.is_dir() and lite_held(path):
            # Checked first: Milvus Lite would log its own traceback, then fail vaguely.
            raise KnowledgeLocked(self.location)
        path.parent.mkdir(parents=True, exist_ok=True)
        try:  # Milvus Lite tokenises with jieba in-process; keep its start-up chatter quiet
            import jieba

            jieba.setLogLevel(logging.WARNING)
        except ImportError:
            pass

    def close(self) -> None:
        with self._lock:
            if self._client is not None:
                try:
                    self._client.close()
                finally:
                    self._client = None
                    self._loaded = False

    # -- schema ---------------------------------------------------------------

    def exists(self) -> bool:
        with self._guard("has_collection"):
            return bool(self.client().has_collection(self.collection))

    def dense_dim(self) -> int | None:
        """The dense field's dimension, or None when the collection does not exist."""
        if not self.exists():
            return None
        with self._guard("describe_collection"):
            info = self.client().describe_collection(self.collection)
        for f in info.get("fields", []):
            if f.get("name") == "dense":
                return int(f.get("params", {}).get("dim", 0)) or None
        return None

    def create(self, dim: int) -> None:
        """Create the collection (dense + BM25) with its indexes; loaded afterwards."""
        from pymilvus import DataType, Function, FunctionType

        c = self.client()
        with self._guard("create_collection"):
            schema = c.create_schema(auto_id=False, enable_dynamic_field=False,
                                     description="si_agent knowledge chunks")
            schema.add_field("id", DataType.VARCHAR, is_primary=True, max_length=160)
            schema.add_field("doc_id", DataType.VARCHAR, max_length=128)
            schema.add_field("doc_hash", DataType.VARCHAR, max_length=64)
            schema.add_field("number", DataType.INT64)
            schema.add_field("title", DataType.VARCHAR, max_length=512)
            schema.add_field("heading", DataType.VARCHAR, max_length=512)
            schema.add_field("content", DataType.VARCHAR, max_length=TEXT_MAX)
            schema.add_field("businesses", DataType.VARCHAR, max_length=512)
            schema.add_field("embedder", DataType.VARCHAR, max_length=256)
            schema.add_field("text", DataType.VARCHAR, max_length=TEXT_MAX, enable_analyzer=True,
                             analyzer_params=ANALYZER)
            schema.add_field("dense", DataType.FLOAT_VECTOR, dim=int(dim))
            schema.add_field("sparse", DataType.SPARSE_FLOAT_VECTOR)
            schema.add_function(Function(
                name="text_bm25", function_type=FunctionType.BM25,
                input_field_names=["text"], output_field_names=["sparse"],
            ))
            index = c.prepare_index_params()
            index.add_index("dense", index_type="HNSW", metric_type="COSINE", params=HNSW_BUILD)
            index.add_index("sparse", index_type="SPARSE_INVERTED_INDEX", metric_type="BM25")
            c.create_collection(self.collection, schema=schema, index_params=index,
                                consistency_level="Strong")
            c.load_collection(self.collection)
        self._loaded = True
        log.info("created knowledge collection %s (dim %d)", self.location, dim)

    def drop(self) -> None:
        with self._guard("drop_collection"):
            if self.client().has_collection(self.collection):
                self.client().drop_collection(self.collection)
        self._loaded = False

    def _ensure_loaded(self) -> None:
        # Milvus Lite brings a reopened collection back released; a server may too.
        if self._loaded:
            return
        with self._guard("load_collection"):
            self.client().load_collection(self.collection)
        self._loaded = True

    # -- writing --------------------------------------------------------------

    def insert(self, chunks: Sequence[Chunk], vectors: np.ndarray, *, doc_hashes: dict[str, str],
               embedder: str) -> None:
        rows = [
            {
                "id": c.chunk_id, "doc_id": c.doc_id, "doc_hash": doc_hashes[c.doc_id],
                "number": c.number, "title": c.title, "heading": c.heading,
                "content": c.text[:TEXT_MAX], "businesses": ",".join(c.businesses),
                "embedder": embedder, "text": c.search_text[:TEXT_MAX],
                "dense": [float(x) for x in v],
            }
            for c, v in zip(chunks, vectors, strict=True)
        ]
        if not rows:
            return
        self._ensure_loaded()
        with self._guard("insert"):
            self.client().insert(self.collection, rows)

    def delete_documents(self, doc_ids: Sequence[str]) -> None:
        if not doc_ids:
            return
        self._ensure_loaded()
        with self._guard("delete"):
            self.client().delete(self.collection, filter=f"doc_id in {_quoted(doc_ids)}")

    def flush(self) -> None:
        """Seal what was written and compact it, so searches use the indexes.

        Milvus Lite searches unflushed rows by brute force in Python (about
        0.3 s dense and 0.8 s BM25 at 10,000 chunks, against 7 ms and 20 ms
        flushed and compacted); a server seals segments and builds indexes.
        """
        self._ensure_loaded()
        with self._guard("flush"):
            self.client().flush(self.collection)
            self.client().compact(self.collection)

    # -- reading --------------------------------------------------------------

    def documents(self) -> dict[str, tuple[str, str]]:
        """Stored documents: ``{doc_id: (doc_hash, embedder)}`` (from each first chunk)."""
        self._ensure_loaded()
        with self._guard("query"):
            rows = self.client().query(self.collection, filter="number == 0",
                                       output_fields=["doc_id", "doc_hash", "embedder"],
                                       limit=MAX_DOCUMENTS)
        if len(rows) >= MAX_DOCUMENTS:
            # One query returns at most 16,384 rows; more documents would need paging.
            raise KnowledgeUnavailable(self.location, f"more than {MAX_DOCUMENTS - 1} documents")
        return {r["doc_id"]: (r["doc_hash"], r["embedder"]) for r in rows}

    def count(self) -> int:
        self._ensure_loaded()
        with self._guard("count"):
            rows = self.client().query(self.collection, filter="", output_fields=["count(*)"])
        return int(rows[0]["count(*)"]) if rows else 0

    def search(self, text: str, vector: np.ndarray | None, *, k: int = 5,
               mode: str = "hybrid", candidates: int = 20) -> list[Hit]:
        """The ``k`` best chunks for ``text`` (BM25) and/or ``vector`` (dense)."""
        if mode not in MODES:
            raise ValueError(f"search mode must be one of {', '.join(MODES)}, got {mode!r}")
        import numpy as np
        from pymilvus import AnnSearchRequest, RRFRanker

        self._ensure_loaded()
        fields = [*_FIELDS, "dense"]
        c = self.client()
        dense = [float(x) for x in vector] if vector is not None else None
        pool = max(k, candidates)
        dense_params = {"metric_type": "COSINE", "params": {"ef": max(HNSW_EF, pool)}}
        with self._guard(f"search ({mode})"):
            if mode == "dense":
                res = c.search(self.collection, data=[dense], anns_field="dense", limit=k,
                               search_params=dense_params, output_fields=fields)
            elif mode == "bm25":
                res = c.search(self.collection, data=[text], anns_field="sparse", limit=k,
                               search_params={"metric_type": "BM25"}, output_fields=fields)
            else:
                requests = [
                    AnnSearchRequest(data=[dense], anns_field="dense", param=dense_params,
                                     limit=pool),
                    AnnSearchRequest(data=[text], anns_field="sparse",
                                     param={"metric_type": "BM25"}, limit=pool),
                ]
                res = c.hybrid_search(self.collection, requests, ranker=RRFRanker(RRF_K),
                                      limit=k, output_fields=fields)
        hits = []
        for r in res[0] if res else []:
            e = r.get("entity", r)
            score = float(r["distance"])
            if mode == "bm25":
                score = abs(score)  # Milvus Lite reports BM25 negated, a server positive
            cosine = None
            if dense is not None and e.get("dense") is not None:
                cosine = float(np.dot(np.asarray(e["dense"], dtype=np.float32), vector))
            hits.append(Hit(
                chunk_id=str(r.get("id", e.get("id"))), doc_id=e["doc_id"], title=e["title"],
                heading=e["heading"], text=e["content"],
                businesses=tuple(b for b in e["businesses"].split(",") if b),
                score=score, cosine=cosine,
            ))
        return hits


def _quoted(values: Sequence[str]) -> str:
    return "[" + ", ".join('"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"' for v in values) + "]"
