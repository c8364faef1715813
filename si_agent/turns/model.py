"""What the turn-event record holds: one ``TurnEvent`` per turn, and what people add to a turn.

Three kinds of record share one store, all keyed by a conversation id (a keyed hash
of the session id and when the session began: ``TurnLog.conversation_of``) and the
turn number within it:

- ``TurnEvent`` (``kind: turn``): written with the session save of every turn;
- ``Feedback`` (``kind: feedback``): a citizen's 👍/👎 (and short reason) on a reply;
- ``Review`` (``kind: review``): a reviewer marked a turn wrong (or right again).

Nothing here holds raw personal data: texts are masked (``si_agent.turns.masking``),
field values as the audit log writes them (``si_agent.audit.mask_values``), the citizen
is a keyed hash. Records are appended, never changed; the newest feedback or review of
a turn is the one that counts.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from si_agent.audit.model import utc_now

# How a conversation ended (a turn's ``outcome``), as staff read it.
OUTCOMES: dict[str, str] = {"done": "已办结", "cancelled": "已取消", "failed": "办理失败",
                            "handed_off": "转人工"}
Outcome = Literal["done", "cancelled", "failed", "handed_off"]
KnowledgeOutcome = Literal["answered", "unanswered", "refused"]
Rating = Literal["up", "down"]
Channel = Literal["text", "voice", "upload", "staff"]  # staff: set in a hand-off


class Span(BaseModel):
    """A masked value inside a stored text: where it is, what kind, whose field.

    ``kind`` is a field type (``idcard``, ``phone``, ``bank_card``, ``name``, ``text``,
    ...) or ``number`` (a long number no field took). ``valid`` says whether the value
    was accepted (False: a field of its kind was refused in that turn; None: unknown).
    A transcript export puts a demo value of that kind in its place.
    """

    model_config = ConfigDict(frozen=True)

    start: int
    end: int
    kind: str
    field: str | None = None
    valid: bool | None = None


class CallView(BaseModel):
    """One tool call of the decision (arguments masked) and what became of it."""

    name: str
    arguments: dict = Field(default_factory=dict)
    status: str = "applied"
    reason: str = "ok"


class FieldChange(BaseModel):
    """A field set or changed in the turn: its value masked, its status."""

    key: str
    label: str
    value: str | None = None
    status: str
    error: str | None = None


class KnowledgeAsk(BaseModel):
    """A knowledge question of the turn (masked) and whether it was answered."""

    question: str
    outcome: KnowledgeOutcome
    sources: list[str] = Field(default_factory=list)


class JobOutcome(BaseModel):
    """The submission queued, run or applied in the turn."""

    id: str
    status: str
    error: str | None = None  # masked
    retryable: bool | None = None  # a failure: whether submitting again may help
    application_no: str | None = None


class TurnEvent(BaseModel):
    """One turn, as the review, the feedback and analytics read it."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["turn"] = "turn"
    at: datetime = Field(default_factory=utc_now)
    conversation: str
    user: str  # the audit log's keyed hash of the session id (shortened)
    turn: int
    channel: Channel = "text"
    state_before: str
    state_after: str
    business: str | None = None
    awaiting: str | None = None
    engine: str = ""
    rule: str = "none"
    confidence: float = 0.0
    calls: list[CallView] = Field(default_factory=list)
    fields: list[FieldChange] = Field(default_factory=list)
    knowledge: list[KnowledgeAsk] = Field(default_factory=list)
    job: JobOutcome | None = None
    outcome: Outcome | None = None
    latency_ms: int = 0
    model_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    input: str = ""  # masked
    input_spans: list[Span] = Field(default_factory=list)
    reply: str = ""  # masked
    id: str | None = None  # given by the store


class Feedback(BaseModel):
    """A citizen's rating of the reply of ``turn``."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["feedback"] = "feedback"
    at: datetime = Field(default_factory=utc_now)
    conversation: str
    turn: int
    rating: Rating
    reason: str = ""  # masked
    id: str | None = None


class Review(BaseModel):
    """A reviewer's verdict on ``turn``: wrong (with a note, and what the reply should
    have said), or right after all (``wrong: false`` takes a mark back)."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["review"] = "review"
    at: datetime = Field(default_factory=utc_now)
    conversation: str
    turn: int
    wrong: bool = True
    note: str = ""  # masked
    expected: str = ""  # masked: what the reply should contain
    actor: str
    id: str | None = None


class Moderation(BaseModel):
    """A citizen's message or a reply the moderation masked, refused or flagged, after
    turn ``turn`` (a refused message runs no turn: it is after the turn before). The
    text itself is never kept here (the turn's masked input and reply are)."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["moderation"] = "moderation"
    at: datetime = Field(default_factory=utc_now)
    conversation: str
    user: str
    turn: int
    where: Literal["input", "output"]
    action: str  # mask, refuse, flag
    categories: list[str] = Field(default_factory=list)
    id: str | None = None


TurnRecord = TurnEvent | Feedback | Review | Moderation
