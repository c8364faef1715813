"""Hit testing: ``/console/hits`` (the page) and ``POST /console/api/hits`` (JSON).

A question goes through the knowledge channel's own code (``KnowledgeBase.read``):
how it was read (typos and dialect put right, business words added), the ranked
chunks of the channel's search with, for each, its rank and score in every search
mode, the relevance gate's verdict, and the channel's answer. Then the question is
sent as a citizen's first message to a sandbox assistant (the same catalog, engine
and knowledge base; sessions in memory, its own audit log, nothing submitted), so
staff see the reply a citizen would get and what the engine decided: a question
that names a business starts it and never reaches the knowledge base.

Nothing here is a change: hit tests are not audited (a question may hold personal
data; it is not logged either).
"""

from __future__ import annotations

import threading
import uuid

from flask import current_app, jsonify, render_template, request
from pydantic import BaseModel, Field

from si_agent.curated import CuratedReading, not_counting
from si_agent.flow.controller import Controller
from si_agent.knowledge import ExplainingKnowledge, knows_nothing
from si_agent.server.auth import json_body
from si_agent.server.console import texts
from si_agent.server.console.blueprint import bp
from si_agent.server.errors import ApiError
from si_agent.session import MemoryStore

RANKED = 20  # how deep each mode's own ranking is looked at
TOP_PER_MODE = 5  # each mode's own best, listed on their own
EXCERPT = 160


class Ranked(BaseModel):
    """A chunk's place in one search mode's ranking (None: not in its first ``RANKED``)."""

    rank: int | None = None
    score: float | None = None


class ChunkRow(BaseModel):
    chunk_id: str
    doc_id: str
    title: str
    heading: str
    excerpt: str
    text: str
    businesses: list[str] = Field(default_factory=list)
    rank: int
    score: float  # the channel's mode's own score
    cosine: float | None = None
    modes: dict[str, Ranked] = Field(default_factory=dict)
    kept: bool = True  # False: removed because its document names no scheme the question names


class CorrectionRow(BaseModel):
    original: str
    replacement: str
    source: str


class Turn(BaseModel):
    """The sandbox assistant's first reply, and what the engine decided."""

    reply: str
    state: str
    business: str | None = None
    engine: str = ""
    rule: str = "none"
    confidence: float = 0.0
    calls: list[str] = Field(default_factory=list)


class CuratedRow(BaseModel):
    id: str
    question: str
    matched: str  # the question or paraphrase the question matched
    how: str  # exact or fuzzy
    score: float


class HitTest(BaseModel):
    question: str
    normalised: str | None = None
    corrections: list[CorrectionRow] = Field(default_factory=list)
    added: list[str] = Field(default_factory=list)
    businesses: list[str] = Field(default_factory=list)  # named by the question's words
    refused: bool = False
    unavailable: str | None = None
    mode: str = "hybrid"
    chunks: list[ChunkRow] = Field(default_factory=list)
    per_mode: dict[str, list[ChunkRow]] = Field(default_factory=dict)
    gate: str | None = None
    best_cosine: float | None = None
    floor: float | None = None
    answer: str | None = None
    sources: list[str] = Field(default_factory=list)
    suggested: str | None = None
    curated: CuratedRow | None = None  # the curated answer that won over the search
    turn: Turn | None = None


class Sandbox:
    """An assistant sharing the real one's catalog, engine and knowledge base, with its
    own memory sessions and audit log: a first message there changes nothing real."""

    def __init__(self, real: Controller) -> None:
        self.controller = Controller(
            real.catalog,
            MemoryStore(),
            real.engine,
            real.executor,
            knowledge=real.knowledge,
            step_handlers=real.step_handlers,
            max_message_chars=real.max_message_chars,
            texts=real.texts,
            handoff_text=real.handoff_text,
        )

    def first_reply(self, question: str) -> Turn:
        session_id = f"console-hits-{uuid.uuid4().hex}"
        try:
            result = self.controller.handle(session_id, question)
            records = self.controller.store.load(session_id)
            memory = records.memory if records is not None else []
        finally:
            self.controller.store.delete(session_id)
        last = memory[-1] if memory else None
        return Turn(
            reply=result.reply,
            state=str(result.state),
            business=result.business.name if result.business else None,
            engine=last.engine if last else "",
            rule=last.rule if last else "none",
            confidence=last.confidence if last else 0.0,
            calls=[f"{c.name}（{c.outcome}）" for c in last.calls] if last else [],
        )


_SANDBOX_LOCK = threading.Lock()


def sandbox() -> Sandbox:
    """The app's sandbox, made on first use."""
    with _SANDBOX_LOCK:
        box = current_app.extensions.get("si_console_sandbox")
        if box is None:
            box = current_app.extensions["si_console_sandbox"] = Sandbox(
                current_app.config["SI_CONTROLLER"]
            )
    return box


def hit_test(question: str) -> HitTest:
    """Every step of ``question`` through the knowledge channel, and the citizen's reply;
    ``ApiError`` 400 for an empty or too long question, 503 without a knowledge base."""
    controller: Controller = current_app.config["SI_CONTROLLER"]
    question = question.strip()
    if not question:
        raise ApiError(400, "empty_message")
    if len(question) > controller.max_message_chars:
        raise ApiError(400, "message_too_long", limit=controller.max_message_chars)
    knowledge = controller.knowledge
    if not isinstance(knowledge, ExplainingKnowledge) or knows_nothing(knowledge):
        detail = knowledge.status().get("detail", "")
        raise ApiError(503, "no_knowledge_to_test", detail=detail)
    reading = knowledge.read(question)
    test = HitTest(
        question=question,
        refused=reading.refused,
        unavailable=reading.unavailable,
        mode=reading.mode,
    )
    if reading.query is not None:
        query = reading.query
        test.normalised = query.text
        test.corrections = [
            CorrectionRow(
                original=c.original,
                replacement=c.replacement,
                source=texts.CORRECTION_SOURCES.get(c.source, c.source),
            )
            for c in query.corrections
        ]
        test.added = list(query.added)
        test.businesses = [
            controller.catalog[b].name for b in query.businesses if b in controller.catalog
        ]
        if reading.found:
            rankings = {
                mode: knowledge.search_query(query, RANKED, mode=mode)
                for mode in texts.MODES
                if mode != test.mode
            }
            kept = {h.chunk_id for h in reading.kept}
            test.chunks = [_row(h, n, rankings, kept) for n, h in enumerate(reading.found, 1)]
            test.per_mode = {
                mode: [_row(h, n, {}, kept) for n, h in enumerate(hits[:TOP_PER_MODE], 1)]
                for mode, hits in rankings.items()
            }
    if reading.verdict is not None:
        test.gate = reading.verdict.gate.value
        test.best_cosine = reading.verdict.best_cosine
        test.floor = reading.verdict.floor
    if reading.answer is not None:
        test.answer = reading.answer.text
        test.sources = list(reading.answer.sources)
        suggested = controller.catalog.get(reading.answer.suggested_business_id or "")
        test.suggested = suggested.name if suggested else None
    if isinstance(reading, CuratedReading) and (found := reading.curated) is not None:
        test.curated = CuratedRow(id=found.answer.id, question=found.answer.question,
                                  matched=found.matched, how=found.how, score=found.score)
    with not_counting():  # staff testing is not a citizen's question: no hit counted
        test.turn = sandbox().first_reply(question)
    return test


def _row(hit, rank: int, rankings: dict, kept: set[str]) -> ChunkRow:
    modes = {}
    for mode, hits in rankings.items():
        place = next(((n, h) for n, h in enumerate(hits, 1) if h.chunk_id == hit.chunk_id), None)
        modes[mode] = Ranked(rank=place[0], score=place[1].score) if place else Ranked()
    text = " ".join(hit.text.split())
    return ChunkRow(
        chunk_id=hit.chunk_id,
        doc_id=hit.doc_id,
        title=hit.title,
        heading=hit.heading,
        excerpt=text[:EXCERPT] + ("…" if len(text) > EXCERPT else ""),
        text=hit.text,
        businesses=list(hit.businesses),
        rank=rank,
        score=hit.score,
        cosine=hit.cosine,
        modes=modes,
        kept=hit.chunk_id in kept,
    )


@bp.route("/hits", methods=["GET", "POST"])
def hits():
    if request.method == "GET":
        return render_template("console/hits.html", question="", test=None)
    question = request.form.get("question", "")
    try:
        test = hit_test(question)
    except ApiError as exc:
        return render_template(
            "console/hits.html", question=question, test=None, error=exc.message
        ), exc.status
    return render_template("console/hits.html", question=question, test=test)


@bp.post("/api/hits")
def hits_api():
    question = json_body().get("question")
    if not isinstance(question, str):
        raise ApiError(400, "message_not_text")
    return jsonify(hit_test(question).model_dump(mode="json"))
