"""``AuditEntry``, one line of the audit log, and ``parse_since`` for queries.

An entry never holds raw personal data: the user is a keyed hash of the session
id, and field values are masked (``si_agent.audit.log``) before an entry is made.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone
from enum import Enum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

# moderation: a citizen's message or a reply the moderation masked, refused or
# flagged (the categories only, never the text); staff: what a staff member did.
AuditEvent = Literal["state", "submission", "moderation", "staff"]


class StaffAction(str, Enum):
    """What a staff member did (``event: staff`` entries): account changes, sign-ins,
    changes made in the console (the word list, business files, curated answers: target
    the answer's id, detail its question), the conversation review's marks and exports, and the
    hand-off queue (target: the ticket number; never a message's text)."""

    ACCOUNT_ADDED = "account_added"
    ACCOUNT_REMOVED = "account_removed"
    PASSWORD_CHANGED = "password_changed"
    SIGNED_IN = "signed_in"
    SIGN_IN_FAILED = "sign_in_failed"
    SIGNED_OUT = "signed_out"
    MODERATION_SAVED = "moderation_saved"  # the word list, saved from the console
    MODERATION_RESTORED = "moderation_restored"  # an earlier version of it, restored
    BUSINESS_SAVED = "business_saved"  # a business file, saved from the console
    TURN_MARKED = "turn_marked"  # the conversation review: a turn marked wrong
    TURN_UNMARKED = "turn_unmarked"
    TRANSCRIPT_EXPORTED = "transcript_exported"  # a conversation exported as a replay test
    CURATED_ADDED = "curated_added"
    CURATED_UPDATED = "curated_updated"
    CURATED_ENABLED = "curated_enabled"
    CURATED_DISABLED = "curated_disabled"
    CURATED_DELETED = "curated_deleted"
    CURATED_IMPORTED = "curated_imported"
    # Knowledge documents (/console/documents): target "doc-…", detail title and version.
    DOCUMENT_UPLOADED = "document_uploaded"  # outcome "refused" for a file not taken
    DOCUMENT_PUBLISHED = "document_published"
    DOCUMENT_DISCARDED = "document_discarded"  # a draft version
    DOCUMENT_DELETED = "document_deleted"
    # the hand-off queue (target: the ticket number; never a message's text)
    HANDOFF_TAKEN = "handoff_taken"
    HANDOFF_REPLIED = "handoff_replied"
    HANDOFF_HANDED_BACK = "handoff_handed_back"
    HANDOFF_CLOSED = "handoff_closed"
    HANDOFF_FIELD_SET = "handoff_field_set"  # a value given for the citizen (never the value)
# The states whose every entry is audited (the submission's life cycle).
AUDITED_STATES: frozenset[str] = frozenset({"executing", "done", "failed"})

_RELATIVE = re.compile(r"(\d+)\s*([smhdw])")
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


def utc_now() -> datetime:
    return datetime.now(timezone.utc)


class AuditEntry(BaseModel):
    """One audited event: a state change of a dialogue, a submission to an executor, or
    something a staff member did (``event: staff``: ``actor``, ``action``, ``target``;
    ``business`` is empty and ``user`` is the actor's name, staff are no citizens)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    at: datetime = Field(default_factory=utc_now)  # UTC
    event: AuditEvent
    user: str  # HMAC-SHA256 of the session id (``AuditLog.user_ref``), never the id
    business: str
    job_id: str | None = None
    state: str | None = None  # event "state": the state entered (executing, done, failed)
    channel: str | None = None  # event "submission": the executor kind (http, rpa, ...)
    # running, succeeded, failed, concluded (a consultation done); for moderation the
    # action: mask, refuse, flag
    outcome: str
    application_no: str | None = None
    values: dict[str, str] = Field(default_factory=dict)  # masked
    detail: str | None = None  # why it failed, masked; moderation: where and categories
    actor: str | None = None  # event "staff": who (an account name, a token's subject, cli:USER)
    action: StaffAction | None = None  # event "staff": what
    target: str | None = None  # event "staff": the account acted on, if another
    id: str | None = None  # given by the store: a row number or a stream id

    @property
    def timestamp(self) -> float:
        return self.at.timestamp()


def parse_since(text: str, *, now: datetime | None = None) -> datetime:
    """``2h``, ``30m``, ``7d``, ``1w`` (ago), or an ISO 8601 time (UTC unless it says).

    Raises ``ValueError`` naming the accepted forms.
    """
    now = now or utc_now()
    value = text.strip()
    match = _RELATIVE.fullmatch(value.lower())
    if match:
        try:
            return now - timedelta(**{_UNITS[match.group(2)]: int(match.group(1))})
        except OverflowError:
            raise ValueError(f"too long ago: {text!r}") from None
    try:
        when = datetime.fromisoformat(value)
    except ValueError:
        raise ValueError(f"not a time: {text!r}; use ISO 8601 (2026-12-01T08:00) or an "
                         "age like 30m, 2h, 7d, 1w") from None
    return when if when.tzinfo else when.replace(tzinfo=timezone.utc)
