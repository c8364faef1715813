"""``TurnLog``: writes one ``TurnEvent`` per turn, the citizens' feedback and the reviews,
and reads conversations back for the console.

The controller hands over a turn's facts (``TurnFacts``, raw) right after the session
save; the log masks them (``si_agent.turns.masking``, ``si_agent.audit.mask_values``)
and appends the event. Appending never breaks a citizen's turn: a store that fails is
logged (the error type only). Records older than ``SI_TURN_RETENTION_DAYS`` are purged
every few minutes by the process that appends.

A conversation is one session's life: from the first turn of a session (a new one,
or the one after a reset or an expiry) to its last. Its id is a keyed hash (the audit
log's pepper) of the session id and when the session began; the citizen is the audit
log's keyed hash of the session id, shortened. Neither can be reversed without the pepper.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from pydantic import BaseModel, Field

from si_agent.audit import AuditLog, mask_values
from si_agent.audit.log import CLOSED_TYPES, application_no
from si_agent.audit.model import utc_now
from si_agent.config.model import Business
from si_agent.core import actions as A
from si_agent.jobs import Job
from si_agent.privacy import redact_text
from si_agent.session.model import FieldState, ToolCallRecord, Usage
from si_agent.turns.masking import Known, mask_text, whole_message
from si_agent.turns.model import (
    CallView,
    Channel,
    Feedback,
    FieldChange,
    JobOutcome,
    KnowledgeAsk,
    KnowledgeOutcome,
    Moderation,
    Outcome,
    Rating,
    Review,
    TurnEvent,
    TurnRecord,
)
from si_agent.turns.store import TurnStore

log = logging.getLogger(__name__)

PURGE_EVERY = 300.0
USER_CHARS = 16
CONVERSATION_CHARS = 24
REASON_CHARS = 200  # a citizen's reason for a rating, at most
NOTE_CHARS = 500  # a reviewer's note or expected answer, at most
SCAN = 200  # conversations read for one list page


@dataclass
class TurnFacts:
    """One turn as the controller knows it after the save (raw: masked by ``TurnLog``)."""

    session_id: str
    started_at: float
    turn: int
    text: str
    reply: str
    state_before: str
    state_after: str
    business: Business | None
    awaiting: str | None
    engine: str
    rule: str
    confidence: float
    calls: Sequence[ToolCallRecord]
    before: Mapping[str, FieldState]
    after: Mapping[str, FieldState]
    questions: Sequence[tuple[str, Any]] = ()  # (question, the channel's answer or None)
    job: Job | None = None
    latency_ms: int = 0
    usage: Usage = field(default_factory=Usage)
    channel: Channel = "text"


class TurnView(BaseModel):
    """A turn with the newest feedback and review on it."""

    event: TurnEvent
    feedback: Feedback | None = None
    review: Review | None = None
    moderation: list[Moderation] = Field(default_factory=list)  # during or after the turn


class Conversation(BaseModel):
    """One conversation, its turns oldest first, and what the list filters on."""

    id: str
    user: str
    started: datetime
    ended: datetime
    businesses: list[str] = Field(default_factory=list)
    outcome: Outcome | None = None
    turns: list[TurnView] = Field(default_factory=list)
    moderation: list[Moderation] = Field(default_factory=list)  # every one, oldest first

    @property
    def unanswered(self) -> int:
        return sum(1 for t in self.turns for k in t.event.knowledge if k.outcome != "answered")

    @property
    def ratings(self) -> dict[str, int]:
        counts = {"up": 0, "down": 0}
        for t in self.turns:
            if t.feedback is not None:
                counts[t.feedback.rating] += 1
        return counts

    @property
    def moderated(self) -> int:
        """Messages and replies the moderation masked, refused or flagged."""
        return len(self.moderation)

    @property
    def marked(self) -> int:
        return sum(1 for t in self.turns if t.review is not None and t.review.wrong)

    def turn(self, number: int) -> TurnView | None:
        return next((t for t in self.turns if t.event.turn == number), None)


class TurnLog:
    """The turn-event record over ``store``; see the module docstring."""

    def __init__(self, store: TurnStore, audit: AuditLog, *, retention_days: int = 90) -> None:
        self.store = store
        self._audit = audit  # its keyed hash names citizens and conversations
        self.retention = timedelta(days=retention_days)
        self._next_purge = 0.0
        self._purge_lock = threading.Lock()

    def __repr__(self) -> str:
        return f"TurnLog({self.store!r}, retention={self.retention.days} days)"

    def conversation_of(self, session_id: str, started_at: float) -> str:
        return self._audit.user_ref(f"{session_id}\0{started_at!r}")[:CONVERSATION_CHARS]

    # -- writing ----------------------------------------------------------------------

    def turn(self, facts: TurnFacts) -> None:
        """Record one turn (after its session was saved); a failing store is logged."""
        try:
            event = self.event(facts)
            self.store.append(event)
            self._maybe_purge()
        except Exception as exc:  # the record must never break a citizen's turn
            log.warning("turn event (turn %s) not written: %s", facts.turn, type(exc).__name__)

    def event(self, f: TurnFacts) -> TurnEvent:
        """The masked event of ``f`` (pure)."""
        b = f.business
        labels = {fd.key: fd.label for fd in b.fields} if b else {}
        types = {fd.key: fd.type for fd in b.fields} if b else {}
        changed = [k for k, st in f.after.items()
                   if (st.value is not None or st.status != "pending")
                   and (f.before.get(k) is None or (st.value, st.status)
                        != (f.before[k].value, f.before[k].status))]
        known = [Known(k, types.get(k, "text"), labels.get(k, k), str(st.value),
                       st.status == "collected")
                 for states in (f.after, f.before) for k, st in states.items()
                 if st.value is not None and not isinstance(st.value, (dict, list, bytes))]
        invalid = frozenset(types.get(k, "") for k in changed
                            if f.after[k].status in ("invalid", "failed"))
        values = mask_values({k: f.after[k].value for k in changed}, b)
        text, spans = mask_text(f.text, known, invalid)
        refused = [k for k in changed if f.after[k].status == "invalid"
                   and types.get(k, "text") not in CLOSED_TYPES]
        if refused and not spans and text.strip():
            # A refused answer (the validator said no, so no value was stored to look
            # for): the whole message stands for it, masked as that field.
            text, spans = whole_message(text.strip(), refused[0], types.get(refused[0], "text"),
                                        labels.get(refused[0], refused[0]))
        return TurnEvent(
            conversation=self.conversation_of(f.session_id, f.started_at),
            user=self._audit.user_ref(f.session_id)[:USER_CHARS],
            turn=f.turn, channel=f.channel,
            state_before=str(f.state_before), state_after=str(f.state_after),
            business=b.id if b else None, awaiting=f.awaiting,
            engine=f.engine, rule=f.rule, confidence=f.confidence,
            calls=[CallView(name=c.name, arguments=_masked_arguments(c.arguments, known),
                            status=c.status, reason=c.reason) for c in f.calls],
            fields=[FieldChange(key=k, label=labels.get(k, k), value=values.get(k),
                                status=str(f.after[k].status),
                                error=_masked(f.after[k].error, known))
                    for k in changed],
            knowledge=[KnowledgeAsk(question=mask_text(q, known)[0][:NOTE_CHARS],
                                    outcome=_answered(a),
                                    sources=list(getattr(a, "sources", None) or ()))
                       for q, a in f.questions],
            job=_job(f.job, known),
            outcome=_outcome(f),
            latency_ms=f.latency_ms,
            model_calls=f.usage.model_calls, prompt_tokens=f.usage.prompt_tokens,
            completion_tokens=f.usage.completion_tokens,
            input=text, input_spans=spans, reply=mask_text(f.reply, known)[0],
        )

    def moderated(self, session_id: str, started_at: float, turn: int,
                  marks: Sequence[tuple[str, str, Sequence[str]]]) -> None:
        """Record what the moderation did in (or, for a refused message, after) ``turn``:
        ``(where, action, categories)`` each; never the text. A failing store is logged."""
        try:
            for where, action, categories in marks:
                self.store.append(Moderation(
                    conversation=self.conversation_of(session_id, started_at),
                    user=self._audit.user_ref(session_id)[:USER_CHARS], turn=turn,
                    where="output" if where == "output" else "input", action=action,
                    categories=list(categories)))
        except Exception as exc:  # the record must never break a citizen's turn
            log.warning("moderation record (turn %s) not written: %s", turn, type(exc).__name__)

    def feedback(self, conversation: str, turn: int, rating: Rating, reason: str = "") -> Feedback:
        """Record a citizen's rating of a reply (raises the store's ``StoreUnavailable``)."""
        record = Feedback(conversation=conversation, turn=turn, rating=rating,
                          reason=redact_text(reason.strip())[:REASON_CHARS])
        self.store.append(record)
        return record

    def review(self, conversation: str, turn: int, actor: str, *, wrong: bool = True,
               note: str = "", expected: str = "") -> Review:
        """Record a reviewer's verdict on a turn (raises ``StoreUnavailable``)."""
        record = Review(conversation=conversation, turn=turn, actor=actor, wrong=wrong,
                        note=redact_text(note.strip())[:NOTE_CHARS],
                        expected=redact_text(expected.strip())[:NOTE_CHARS])
        self.store.append(record)
        return record

    # -- reading ----------------------------------------------------------------------

    def conversation(self, conversation: str) -> Conversation | None:
        """The conversation with its turns, feedback and reviews (None: not recorded)."""
        return _assemble(conversation, self.store.conversation(conversation))

    def recent(self, since: datetime | None = None, limit: int = SCAN) -> list[Conversation]:
        """The conversations active since ``since``, the most recently active first."""
        ids = self.store.recent(since=since, limit=limit)
        records = self.store.conversations(ids)
        found = (_assemble(c, records.get(c, [])) for c in ids)
        return [c for c in found if c is not None]

    def has_turn(self, conversation: str, turn: int) -> bool:
        return any(r.kind == "turn" and r.turn == turn
                   for r in self.store.conversation(conversation))

    def purge(self) -> None:
        self.store.purge(utc_now() - self.retention)

    def _maybe_purge(self) -> None:
        now = time.monotonic()
        if now < self._next_purge or not self._purge_lock.acquire(blocking=False):
            return
        try:
            self._next_purge = now + PURGE_EVERY
            self.purge()
        finally:
            self._purge_lock.release()


def _assemble(conversation: str, records: list[TurnRecord]) -> Conversation | None:
    events = [r for r in records if isinstance(r, TurnEvent)]
    marks = [r for r in records if isinstance(r, Moderation)]
    if not events and not marks:
        return None
    views = {e.turn: TurnView(event=e) for e in events}  # a turn recorded twice: the last
    for r in records:
        view = views.get(r.turn)
        if view is None:
            continue
        if isinstance(r, Feedback):
            view.feedback = r
        elif isinstance(r, Review):
            view.review = r if r.wrong else None
        elif isinstance(r, Moderation):
            view.moderation.append(r)
    turns = sorted(views.values(), key=lambda v: v.event.turn)
    businesses: list[str] = []
    for e in events:
        if e.business and e.business not in businesses:
            businesses.append(e.business)
    outcome = next((e.outcome for e in reversed(events) if e.outcome), None)
    # A conversation may be only refused messages (its first message was refused).
    times = sorted([r.at for r in (*events, *marks)])
    return Conversation(id=conversation, user=(events[0].user if events else marks[0].user),
                        started=times[0], ended=times[-1], businesses=businesses,
                        outcome=outcome, turns=turns, moderation=marks)


def _masked(text: str | None, known: list[Known]) -> str | None:
    return mask_text(text, known)[0] if text else None


def _answered(answer: Any) -> KnowledgeOutcome:
    if answer is None:
        return "unanswered"
    if getattr(answer, "refused", False):
        return "refused"
    return "answered" if getattr(answer, "sources", None) else "unanswered"


def _job(job: Job | None, known: list[Known]) -> JobOutcome | None:
    if job is None:
        return None
    error = mask_text(job.error.message, known)[0] if job.error and job.error.message else None
    return JobOutcome(id=job.id, status=job.status, error=error,
                      retryable=job.error.retryable if job.error else None,
                      application_no=application_no(job.result))


def _outcome(f: TurnFacts) -> Outcome | None:
    if f.state_after != f.state_before and f.state_after in ("done", "failed"):
        return "done" if f.state_after == "done" else "failed"
    applied = [c for c in f.calls if c.status == "applied"]
    if any(c.name == A.CANCEL_FLOW for c in applied) and f.state_before != f.state_after:
        return "cancelled"
    if any(c.name == A.SMALL_TALK and c.arguments.get("kind") == "handoff" for c in applied):
        return "handed_off"
    return None


def _masked_arguments(arguments: Mapping[str, Any], known: list[Known]) -> dict:
    """Arguments (already masked by type in the decision record) with open values masked."""

    def one(value: Any) -> Any:
        if isinstance(value, str):
            return mask_text(value, known)[0]
        if isinstance(value, Mapping):
            return {k: one(v) for k, v in value.items()}
        if isinstance(value, list):
            return [one(v) for v in value]
        return value

    return {k: one(v) for k, v in arguments.items()}
