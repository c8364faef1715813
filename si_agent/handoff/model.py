"""``Ticket``: one hand-off of a citizen's conversation to a person, and its messages.

A ticket is opened ``waiting``; a staff member who takes it holds it under a lease
(``lease_until``) that their console page renews; a lease not renewed in time lets
the ticket wait again (``Ticket.current``: computed on reading, so a staff page that
died needs no clean-up job). ``closed`` is final and carries an ``Outcome``.
What a ticket holds about the citizen is masked before it is made (``context``).
"""

from __future__ import annotations

import time
from enum import Enum
from typing import Literal

from pydantic import BaseModel, Field

MAX_MESSAGES = 500  # per ticket: a conversation longer than this goes on by phone
MAX_TURNS = 10  # of the conversation before the hand-off, kept on the ticket


class Reason(str, Enum):
    """Why the ticket was opened."""

    ASKED = "asked"  # "人工", "转人工"
    COMPLAINT = "complaint"  # "投诉"
    FAILURES = "repeated_failures"  # a field failed its checks too often
    MODEL = "model"  # the model engine's hand-off call


class TicketState(str, Enum):
    WAITING = "waiting"
    HELD = "held"
    CLOSED = "closed"


class Outcome(str, Enum):
    """How a ticket ended."""

    RESOLVED = "resolved"  # staff answered it
    HANDED_BACK = "handed_back"  # back to the assistant, which goes on with the business
    CALLBACK = "callback"  # staff will call or the citizen goes to a counter
    NO_REPLY = "no_reply"  # the citizen did not answer
    LEFT = "left"  # the citizen left the queue ("结束人工")


Sender = Literal["citizen", "staff", "system"]


class Message(BaseModel):
    """One message of the hand-off conversation (``seq`` counts from 1 per ticket)."""

    seq: int
    sender: Sender
    text: str
    at: float = Field(default_factory=time.time)
    staff: str | None = None  # who wrote it (staff) or did it (system)
    # "staff": a note for the console only (the citizen's page showed it as a reply)
    audience: Literal["all", "staff"] = "all"


class Turn(BaseModel):
    """One message of the conversation before the hand-off, masked."""

    role: str
    text: str


class Ticket(BaseModel):
    number: str  # what the citizen is told and staff search by: H1207-0001
    session_id: str
    reason: Reason
    business_id: str | None = None
    business_name: str | None = None
    fields: dict[str, str] = Field(default_factory=dict)  # label -> masked value
    turns: list[Turn] = Field(default_factory=list)
    created: float = Field(default_factory=time.time)
    state: TicketState = TicketState.WAITING
    holder: str | None = None
    lease_until: float | None = None
    taken_at: float | None = None
    closed_at: float | None = None
    closed_by: str | None = None
    outcome: Outcome | None = None
    note: str | None = None  # staff's closing note (masked)
    messages: list[Message] = Field(default_factory=list)
    version: int = 0  # the store's compare-and-set counter

    def current(self, now: float | None = None) -> TicketState:
        """The state as of ``now``: a hold whose lease ran out is waiting again."""
        if self.state == TicketState.HELD and (self.lease_until or 0) <= (now or time.time()):
            return TicketState.WAITING
        return self.state

    def held_by(self, now: float | None = None) -> str | None:
        """Who holds the ticket now (``None`` when waiting or closed)."""
        return self.holder if self.current(now) == TicketState.HELD else None

    @property
    def open(self) -> bool:
        return self.state != TicketState.CLOSED

    def add(self, sender: Sender, text: str, staff: str | None = None,
            audience: Literal["all", "staff"] = "all") -> Message:
        """Append a message (the oldest go beyond ``MAX_MESSAGES``)."""
        seq = (self.messages[-1].seq if self.messages else 0) + 1
        message = Message(seq=seq, sender=sender, text=text, staff=staff, audience=audience)
        self.messages = [*self.messages, message][-MAX_MESSAGES:]
        return message
