"""``KnowledgeBase``: a knowledge channel over a Milvus collection (si_agent's ``Knowledge``).

One question goes: understand (typos and dialect put right, business words
added: ``rag/query.py``) → embed → hybrid search → relevance gate (a named scheme
only from documents naming it, a domain word, the cosine floor) → answer
(extractive, or a generator's) → suggested business from the document tags.
``read`` returns every step as data (``Reading``: the staff console's hit testing);
``answer`` is its last step.

Besides the knowledge directory, the documents staff publish in the console
(``rag/library.py``, ``library=``) are searched. ``publish`` indexes one of them
incrementally — that document's chunks removed and its new ones embedded and added,
nothing else touched — and ``withdraw`` removes one; ``ingest`` and a first build keep
them (they are not "documents no longer in the directory").

The store is opened on first use, or in the background by ``prepare()`` (what
``si-agent serve`` calls as it starts listening); a missing (or empty)
collection is built then from the knowledge directory, its vectors copied from
the ones shipped with the corpus (``rag/shipped.py``), so the first
``serve``/``chat`` on a fresh machine works. While ``prepare()`` is at work,
``answer`` says the knowledge base is being prepared and ``status`` reports
``building``; nothing waits for it. Any store failure — a missing, locked or corrupt Milvus
Lite directory, an unreachable server, an embedder whose package is
missing — makes ``answer`` return an apology
(no suggestion) and ``status`` report ``ok: False``; the next attempt to
reopen waits ``retry_after`` seconds so a dead server does not slow every turn.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from rag import texts
from rag.answer import Answer, Generator, compose
from rag.documents import Document, load_documents
from rag.embedders import Embedder
from rag.errors import DocumentError, KnowledgeUnavailable
from rag.ingest import IngestReport, document_hash, embed_and_insert, ingest
from rag.query import Query, QueryUnderstanding, understanding_for
from rag.relevance import Verdict, judge, must_refuse, naming_scheme
from rag.retriever import MilvusRetriever
from rag.sentences import SentencePicker
from rag.store import Hit, MilvusStore

if TYPE_CHECKING:
    from rag.library import Library

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class PublishReport:
    """What ``KnowledgeBase.publish`` did: chunks indexed (embedded: not from shipped
    vectors) and how long it took."""

    doc_id: str
    chunks: int
    embedded: int
    seconds: float


@dataclass(frozen=True)
class Reading:
    """One question through the channel, step by step (``KnowledgeBase.read``).

    ``query`` is the question as understood (None when it was not searched),
    ``found`` the ranked chunks of the channel's search, ``kept`` those left by
    the scheme check (``relevance.naming_scheme``), ``verdict`` the relevance
    gate's, ``answer`` what the channel answers (None: nothing relevant), and
    ``unavailable`` why the store could not be searched.
    """

    question: str
    query: Query | None = None
    refused: bool = False
    found: tuple[Hit, ...] = ()
    kept: tuple[Hit, ...] = ()
    verdict: Verdict | None = None
    answer: Answer | None = None
    unavailable: str | None = None
    mode: str = "hybrid"  # the search mode ``found`` comes from (``rag.store.MODES``)


class KnowledgeBase:
    """Answers questions from the knowledge documents; never raises into the dialogue."""

    def __init__(
        self,
        store: MilvusStore,
        embedder: Embedder,
        *,
        kb_dir: Path | None = None,
        build_missing: bool = True,
        generator: Generator | None = None,
        understanding: QueryUnderstanding | None = None,
        mode: str = "hybrid",
        top_k: int = 8,
        relevance_floor: float | None = None,
        retry_after: float = 30.0,
        library: Library | None = None,
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.kb_dir = Path(kb_dir) if kb_dir is not None else None
        self.build_missing = build_missing
        self.generator = generator
        # The term table is read now: a broken one fails at start-up (``TermsError``).
        self.understanding = understanding or understanding_for(self.kb_dir)
        self.retriever = MilvusRetriever(store, embedder, mode=mode)
        self.top_k = top_k
        self.relevance_floor = (relevance_floor if relevance_floor is not None
                                else getattr(embedder, "relevance_floor", 0.0))
        self.retry_after = retry_after
        self.library = library
        self._lock = threading.Lock()
        self._picker = SentencePicker()
        self._as_of: dict[str, str] = {}
        self._doc_texts: dict[str, str] = {}  # what each document says (the scheme check)
        self._bodies: dict[str, str] = {}  # the key sentences' word weights
        self._ready = False
        self._building = threading.Event()  # prepare()'s thread is opening the store
        self._activity = "opening the store"
        self._error: KnowledgeUnavailable | None = None
        self._failed_at = 0.0

    # -- the Knowledge protocol ---------------------------------------------

    def answer(self, question: str, *, generate: bool = True,
               context: str | None = None) -> Answer | None:
        """An answer with its sources, None when nothing relevant, an apology when broken.

        ``generate=False`` answers extractively even with a generator (a model):
        for a turn that has already made its one model call. ``context`` names what
        the dialogue is about (the business being done): a question that names no
        business of its own is searched and answered as about it.
        """
        return self.read(question, generate=generate, context=context).answer

    def read(self, question: str, *, generate: bool = True,
             context: str | None = None) -> Reading:
        """``answer``'s every step as data (what staff's hit testing shows); the answer
        is ``Reading.answer``, exactly what ``answer`` returns."""
        question = (question or "").strip()
        if not question:
            return Reading(question)
        if self._building.is_set():
            return Reading(question, answer=Answer(text=texts.BUILDING),
                           unavailable="building")
        try:
            query = self.understand(question, context=context)
            if must_refuse(f"{question}\n{query.text}", self.understanding.refuse):
                log.info("refused a question (%d characters)", len(question))
                return Reading(question, query, refused=True,
                               answer=Answer(text=texts.REFUSED, refused=True))
            found = self.search_query(query, k=self.top_k)
        except KnowledgeUnavailable as exc:
            log.warning("%s", exc)
            return Reading(question, answer=Answer(text=texts.APOLOGY), unavailable=str(exc))
        except Exception:  # the dialogue must keep working whatever the store does
            log.exception("knowledge search failed")  # the question may hold personal data
            return Reading(question, answer=Answer(text=texts.APOLOGY),
                           unavailable="the search failed (see the log)")
        self._learn(found)
        hits = naming_scheme(query.text, found, self._doc_texts)
        verdict = judge(query.text, hits, self.relevance_floor, self.understanding.domain)
        reading = Reading(question, query, found=tuple(found), kept=tuple(hits), verdict=verdict,
                          mode=self.retriever.mode)
        if not verdict.relevant:
            log.info("no relevant passage (question of %d characters)", len(question))
            return reading
        answer = compose(query.text, hits, generator=self.generator if generate else None,
                         picker=self._picker,
                         as_of=self._as_of)
        if answer is None:
            log.info("the generator found no answer in the passages")
        return replace(reading, answer=answer)

    def status(self) -> dict:
        """``{"ok", "state", "detail"}`` for /readyz; opens (and builds) the store if needed.

        ``state`` is ``ready``, ``unavailable`` (``locked`` when another process has the
        Milvus Lite directory open), or ``building`` while ``prepare()``'s
        thread opens (or builds) the store: then it returns at once.
        """
        if self._building.is_set():
            return {"ok": False, "state": "building",
                    "detail": f"{self._activity}: {self.store.location}"}
        try:
            self.ensure_ready()
            count = self.store.count()
        except KnowledgeUnavailable as exc:
            return {"ok": False, "state": exc.state,
                    "detail": str(exc)}
        return {"ok": True, "state": "ready",
                "detail": f"{count} chunks in {self.store.location}, embedder {self.embedder.name}"}

    def prepare(self) -> None:
        """Open (building when missing) the store in a background thread; returns at once.

        Meanwhile ``answer`` says the knowledge base is being prepared and ``status``
        reports ``building``. A failure ends as ``ensure_ready``'s would: logged, then
        reported by ``status`` and apologised for by ``answer``.
        """
        with self._lock:
            if self._ready or self._building.is_set():
                return
            self._building.set()
        threading.Thread(target=self._prepare, name="knowledge-prepare", daemon=True).start()

    def _prepare(self) -> None:
        started = time.monotonic()
        try:
            self.ensure_ready()
            log.info("knowledge base ready in %.1f s: %s", time.monotonic() - started,
                     self.store.location)
        except KnowledgeUnavailable as exc:
            log.warning("%s", exc)
        except Exception:  # the thread must not die silently, nor leave "building" behind
            log.exception("preparing the knowledge base failed")
            self._fail(KnowledgeUnavailable(self.store.location, "preparing it failed"))
        finally:
            self._building.clear()

    # -- the rest ---------------------------------------------------------------

    def understand(self, question: str, *, context: str | None = None) -> Query:
        """The question with typos and dialect put right, and the business words it adds
        (``context``: see ``answer``)."""
        return self.understanding.understand(question, context=context)

    def search(self, question: str, k: int = 5, *, mode: str | None = None) -> list[Hit]:
        """Ranked chunks for a question as asked; raises ``KnowledgeUnavailable``."""
        return self.search_query(self.understand(question), k, mode=mode)

    def search_query(self, query: Query, k: int = 5, *, mode: str | None = None) -> list[Hit]:
        """Ranked chunks for an understood question; raises ``KnowledgeUnavailable``."""
        self.ensure_ready()
        try:
            return self.retriever.search(query.text, k, mode=mode, expansion=" ".join(query.added))
        except KnowledgeUnavailable as exc:
            self._fail(exc)
            raise

    def ingest(self, *, rebuild: bool = False, progress: bool = False) -> IngestReport:
        """Bring the collection in line with the knowledge directory; raises on failure."""
        if self.kb_dir is None:
            raise KnowledgeUnavailable(self.store.location, "no knowledge directory configured")
        with self._lock:
            report = ingest(self.store, self.embedder, self.kb_dir, rebuild=rebuild,
                            progress=progress, extra=self._published())
            self._ready, self._error = True, None
        return report

    def publish(self, doc: Document) -> PublishReport:
        """Index ``doc`` (an uploaded document, new or a new version of one): its old
        chunks go, its new ones are embedded and added; raises ``KnowledgeUnavailable``."""
        from rag.chunking import chunk_document

        started = time.monotonic()
        self.ensure_ready()
        chunks = sorted(chunk_document(doc), key=lambda c: c.number == 0)  # as ingest does
        with self._lock:
            try:
                self.store.delete_documents([doc.doc_id])
                embedded = embed_and_insert(
                    self.store, self.embedder, chunks,
                    {doc.doc_id: document_hash(doc, self.embedder.name)}, None, False)
                self.store.flush()
            except KnowledgeUnavailable as exc:
                self._fail(exc)
                raise
            self._remember(doc)
        seconds = time.monotonic() - started
        log.info("published %s: %d chunks in %.1f s", doc.doc_id, len(chunks), seconds)
        return PublishReport(doc.doc_id, len(chunks), embedded, seconds)

    def withdraw(self, doc_id: str) -> None:
        """Remove a document's chunks from the index; raises ``KnowledgeUnavailable``."""
        self.ensure_ready()
        with self._lock:
            try:
                self.store.delete_documents([doc_id])
                self.store.flush()
            except KnowledgeUnavailable as exc:
                self._fail(exc)
                raise
            for cache in (self._as_of, self._doc_texts, self._bodies):
                cache.pop(doc_id, None)
            self._picker = SentencePicker(self._bodies.values())

    def _remember(self, doc: Document) -> None:
        self._as_of[doc.doc_id] = doc.as_of
        self._doc_texts[doc.doc_id] = f"{doc.title}\n{doc.body}"
        self._bodies[doc.doc_id] = doc.body
        self._picker = SentencePicker(self._bodies.values())

    def _learn(self, found) -> None:
        """Documents another process published (a Milvus server shared by workers): their
        dates and texts read from the library when one of their chunks is first found."""
        unknown = {h.doc_id for h in found} - self._as_of.keys()
        if not unknown or self.library is None:
            return
        try:
            docs = [d for d in self._published() if d.doc_id in unknown]
        except KnowledgeUnavailable as exc:
            log.warning("%s", exc)
            return
        with self._lock:
            for doc in docs:
                self._remember(doc)

    def _published(self) -> list[Document]:
        """The documents published in the console (none without a library)."""
        if self.library is None:
            return []
        import sqlite3

        try:
            return self.library.published()
        except (sqlite3.Error, OSError) as exc:
            raise KnowledgeUnavailable(self.store.location,
                                       f"the uploaded documents cannot be read: {exc}") from exc

    def ensure_ready(self) -> None:
        """Open the store, building the collection when missing; raises ``KnowledgeUnavailable``."""
        with self._lock:
            if self._ready:
                return
            if self._error is not None and time.monotonic() - self._failed_at < self.retry_after:
                raise self._error
            try:
                self._open()
            except KnowledgeUnavailable as exc:
                self._fail(exc)
                raise
            self._ready, self._error = True, None

    def _open(self) -> None:
        try:
            _ = self.embedder.dim  # loads the model now; fails here if its package is missing
        except ImportError as exc:
            raise KnowledgeUnavailable(self.store.location, str(exc)) from exc
        missing = not self.store.exists() or self.store.count() == 0
        if missing and not self.build_missing:
            raise KnowledgeUnavailable(self.store.location,
                                       "the collection is missing; run: si-agent kb ingest")
        if self.kb_dir is None:
            if missing:
                raise KnowledgeUnavailable(self.store.location,
                                           "the collection is missing and no knowledge directory is set")
            return
        try:
            if missing:
                log.info("knowledge base %s is missing: building it from %s",
                         self.store.location, self.kb_dir)
                self._activity = f"building it from {self.kb_dir}"
                report = ingest(self.store, self.embedder, self.kb_dir, extra=self._published())
                log.info("built the knowledge base: %s", report.summary())
            docs = load_documents(self.kb_dir) + self._published()
        except DocumentError as exc:
            if missing:
                raise KnowledgeUnavailable(self.store.location,
                                           f"bad knowledge document: {exc}") from exc
            # The stored collection still serves, without key-sentence weights or dates.
            log.warning("cannot check the knowledge documents for changes: %s", exc)
            return
        if not missing:
            self._complete_or_warn(docs)
        self.understanding.normaliser.warm()
        self._as_of = {d.doc_id: d.as_of for d in docs}
        self._doc_texts = {d.doc_id: f"{d.title}\n{d.body}" for d in docs}
        self._bodies = {d.doc_id: d.body for d in docs}
        self._picker = SentencePicker(self._bodies.values())

    def _complete_or_warn(self, docs) -> None:
        """Finish a build that stopped half-way; warn of documents changed since the last ingest.

        Every stored document as it is in the directory, some not stored yet: a first build
        was interrupted (the server stopped while building) or documents were added. Those
        are added now (from the shipped vectors where they match). A changed or removed
        document is left to ``si-agent kb ingest``, which staff run on purpose.
        """
        stored = {k: v[0] for k, v in self.store.documents().items()}
        current = {d.doc_id: document_hash(d, self.embedder.name) for d in docs}
        if stored == current:
            return
        if all(current.get(k) == h for k, h in stored.items()):
            log.warning("knowledge base %s lacks %d of the %d documents of %s (a build that "
                        "stopped half-way, or new documents): adding them", self.store.location,
                        len(current) - len(stored), len(current), self.kb_dir)
            self._activity = f"completing it from {self.kb_dir}"
            log.info("completed the knowledge base: %s",
                     ingest(self.store, self.embedder, self.kb_dir,
                            extra=[d for d in docs if d.path is None]).summary())
            return
        log.warning("knowledge documents in %s changed since the last ingest; "
                    "run: si-agent kb ingest", self.kb_dir)

    def _fail(self, exc: KnowledgeUnavailable) -> None:
        self._ready = False
        self._activity = "opening the store"  # what a later prepare() starts with
        self._error = exc
        self._failed_at = time.monotonic()
