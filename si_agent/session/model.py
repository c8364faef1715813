"""What si_agent remembers about one user's conversation.

A ``Session`` is plain data (pydantic), serialised as JSON by every store.
``version`` supports optimistic concurrency: a store's ``save`` only succeeds
when the stored version still equals the loaded one, then increments it.

Size bound. Every store writes the whole session on every turn, so what grows
with the dialogue is capped: the history keeps the last ``HISTORY_TURNS`` turns
(two messages each, at most ``MESSAGE_CHARS`` characters per message), the
transcript (what a reloaded page shows again) the last ``TRANSCRIPT_MESSAGES``
messages of at most ``MESSAGE_CHARS`` characters, and the
decision records the last ``MEMORY_RECORDS``, each at most ``RECORD_CHARS``
characters of JSON (a longer one keeps its outline and a shortened input). The
rest (fields, step data, at most ``MAX_SUSPENDED`` businesses put aside) is
bounded by the business definitions, not by the number of turns. So a session
stays under ``SESSION_BOUND_CHARS`` characters of JSON however long the dialogue
(about 3 bytes per character for Chinese text in UTF-8); docs/performance.md
has the sizes measured.
"""

from __future__ import annotations

import time
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from si_agent.session.states import FieldStatus, State

HISTORY_TURNS = 6
# The messages a reloaded page shows again (GET /api/session/history), as they were shown.
TRANSCRIPT_MESSAGES = 30
MESSAGE_CHARS = 2000  # a longer history message keeps its start (the model's context)
# Decision records are for debugging (``GET /api/session?debug=1``, ``si-agent chat``):
# the last 20 cover a whole dialogue, and each is capped.
MEMORY_RECORDS = 20
RECORD_CHARS = 2000
RECORD_INPUT_CHARS = 200  # the input kept in a record that was too long
MAX_SUSPENDED = 3  # businesses put aside for another one, kept with their values
# What the capped parts can take, plus a generous allowance for the rest.
SESSION_BOUND_CHARS = (2 * HISTORY_TURNS * MESSAGE_CHARS + TRANSCRIPT_MESSAGES * MESSAGE_CHARS
                       + MEMORY_RECORDS * RECORD_CHARS + 40_000)


class FieldState(BaseModel):
    """The current value and status of one business field."""

    value: Any = None
    status: FieldStatus = FieldStatus.PENDING
    attempts: int = 0
    error: str | None = None


class Produced(BaseModel):
    """A field value a step read (e.g. from an ID card), and which step read it."""

    value: Any
    step: str


class SuspendedFlow(BaseModel):
    """A business put aside for another one, or cancelled while it was being filled
    in: where it stood, with every value."""

    business_id: str
    state: str
    fields: dict[str, FieldState] = Field(default_factory=dict)
    awaiting: str | None = None
    step_data: dict[str, Any] = Field(default_factory=dict)
    produced: dict[str, Produced] = Field(default_factory=dict)
    step_files: dict[str, dict[str, bool]] = Field(default_factory=dict)
    skipped: list[str] = Field(default_factory=list)
    resume: dict[str, Any] | None = None
    flow_nonce: str | None = None
    # Put aside by a cancel, not a switch (issue 25): taken up again on "继续".
    cancelled: bool = False
    at: float = Field(default_factory=time.time)

    @property
    def filled(self) -> int:
        return sum(1 for st in self.fields.values() if st.status == "collected")

    @property
    def worth_offering(self) -> bool:
        """Offered again when another business ends: a switched one, or a cancelled
        one with something given (an empty one is taken up only when asked for)."""
        return not self.cancelled or bool(self.filled or self.step_data)


class Message(BaseModel):
    """One line of the conversation; immutable, so views can share it without a copy."""

    model_config = ConfigDict(frozen=True)

    role: Literal["user", "assistant"]
    text: str


class Shown(Message):
    """A message as the page showed it (the citizen's personal numbers masked), and when."""

    at: float = Field(default_factory=time.time)


class Usage(BaseModel):
    """Model calls and tokens spent."""

    model_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            model_calls=self.model_calls + other.model_calls,
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
        )


class ToolCallRecord(BaseModel):
    """One call and what became of it: ``status`` and ``reason`` (a code) are data;
    ``detail`` says more for people, and ``outcome`` puts it in one line."""

    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    status: Literal["applied", "rejected"] = "applied"
    reason: str = "ok"
    detail: str = ""

    @property
    def outcome(self) -> str:
        return f"{self.status}: {self.detail}" if self.detail else self.status


class DecisionRecord(BaseModel):
    """What happened in one turn, for debugging and the model's context."""

    turn: int
    input: str
    engine: str
    state_before: str
    state_after: str
    offered: list[str] = Field(default_factory=list)
    calls: list[ToolCallRecord] = Field(default_factory=list)
    rule: str = "none"
    confidence: float = 0.0
    reason: str = ""
    usage: Usage | None = None  # None: no model call (kept small: records are capped)
    at: float = Field(default_factory=time.time)


class Session(BaseModel):
    """One user's dialogue state; owned by the controller, persisted by a store."""

    session_id: str
    # Whose consultation profile this conversation keeps (core.consult); the session
    # id unless a client names one to resume with.
    group_id: str | None = None
    state: State = State.IDLE
    business_id: str | None = None
    fields: dict[str, FieldState] = Field(default_factory=dict)
    awaiting: str | None = None
    step_attempts: int = 0
    step_data: dict[str, Any] = Field(default_factory=dict)  # done steps' data, by step id
    produced: dict[str, Produced] = Field(default_factory=dict)  # field values read by steps
    # Files done steps kept (si_agent.session.files), by step id: name -> sent with
    # the submission?
    step_files: dict[str, dict[str, bool]] = Field(default_factory=dict)
    skipped: list[str] = Field(default_factory=list)  # optional steps the citizen declined
    suggestion: str | None = None
    # The last reply asked "确定重新开始吗？" (a typed 重新开始 with something to lose).
    start_over_asked: bool = False
    # The businesses the last reply listed (buttons on the page, again after a reload).
    listed: list[str] = Field(default_factory=list)
    result: dict[str, Any] | None = None
    flow_nonce: str | None = None
    job_id: str | None = None  # the submission in progress or last made
    # What the executor left for the flow's next submission (e.g. a web form draft).
    resume: dict[str, Any] | None = None
    retryable: bool = True  # whether the last failure may be submitted again
    notice: str | None = None  # an outcome that arrived between turns, not yet shown
    # The hand-off ticket opened for this session (si_agent.handoff), until a turn sees
    # it closed: only a session with one reads the ticket store in its turns.
    handoff: str | None = None
    # Long numbers heard in a spoken message, read back and not stored until the
    # citizen says they are right (flow.readback): field key -> validated value.
    heard: dict[str, str] = Field(default_factory=dict)
    # Businesses put aside (newest last, at most MAX_SUSPENDED); they expire with the session.
    suspended: list[SuspendedFlow] = Field(default_factory=list)
    history: list[Message] = Field(default_factory=list)
    # What the page showed, for a page loaded again: never a citizen's raw numbers.
    transcript: list[Shown] = Field(default_factory=list)
    # Decision records, each kept as its JSON text: written once per turn and read
    # only for debugging, so loading a session does not build 50 models every turn.
    records: list[str] = Field(default_factory=list)
    turn: int = 0
    usage: Usage = Field(default_factory=Usage)
    version: int = 0
    updated_at: float = Field(default_factory=time.time)
    # When this session began (its first turn): with the id, it names the conversation
    # in the turn-event record (si_agent.turns).
    started_at: float = Field(default_factory=time.time)

    def remember(self, role: Literal["user", "assistant"], text: str) -> None:
        """Append to the bounded history kept for the model (last 6 turns)."""
        self.history.append(Message(role=role, text=text[:MESSAGE_CHARS]))
        del self.history[: -2 * HISTORY_TURNS]

    def show(self, role: Literal["user", "assistant"], text: str) -> None:
        """Append to the bounded transcript a message as the page shows it (a citizen's
        message masked by the caller: ``si_agent.privacy.redact_text``)."""
        self.transcript.append(Shown(role=role, text=_cut(text)))
        del self.transcript[:-TRANSCRIPT_MESSAGES]

    def show_more(self, text: str) -> None:
        """The last assistant message of the transcript goes on with ``text`` (an outcome
        or a note the same reply gained after the turn was saved)."""
        if not text:
            return
        if self.transcript and self.transcript[-1].role == "assistant":
            last = self.transcript[-1]
            joined = f"{last.text}\n{text}" if last.text else text
            self.transcript[-1] = last.model_copy(update={"text": _cut(joined)})
        else:
            self.show("assistant", text)

    def record(self, decision: DecisionRecord) -> None:
        """Append a decision record (at most ``RECORD_CHARS``) to the bounded memory."""
        text = decision.model_dump_json()
        if len(text) > RECORD_CHARS:
            text = _outline(decision)
        self.records.append(text)
        del self.records[:-MEMORY_RECORDS]

    @property
    def memory(self) -> list[DecisionRecord]:
        """The decision records, oldest first (parsed on each access)."""
        return [DecisionRecord.model_validate_json(r) for r in self.records]


def _cut(text: str) -> str:
    return text if len(text) <= MESSAGE_CHARS else text[:MESSAGE_CHARS - 1] + "…"


def _outline(decision: DecisionRecord) -> str:
    """A too-long record as JSON of at most ``RECORD_CHARS``: a shortened input, the
    calls' names and outcomes without their arguments, and if still too long, no calls."""
    calls = [call.model_copy(update={"arguments": {}, "detail": call.detail[:RECORD_INPUT_CHARS]})
             for call in decision.calls]
    short = decision.model_copy(update={"input": decision.input[:RECORD_INPUT_CHARS],
                                        "calls": calls, "reason": decision.reason[:RECORD_INPUT_CHARS]})
    text = short.model_dump_json()
    if len(text) > RECORD_CHARS:
        text = short.model_copy(update={"calls": [], "offered": []}).model_dump_json()
    return text
