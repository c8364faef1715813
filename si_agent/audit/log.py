"""``AuditLog``: what the flow calls to record a submission or a state change.

It turns the flow's objects into ``AuditEntry`` lines that hold no raw personal
data, and appends them to an ``AuditStore``:

- the user is ``HMAC-SHA256(pepper, session id)`` (``user_ref``): the same user
  always gets the same reference, which nobody can reverse without the pepper;
- field values are masked by their field's type (ID numbers, phones and bank
  cards starred in the middle, names after the first character); values of a
  closed type (``CLOSED_TYPES``: enum, multi_enum, bucket, integer, number,
  year, date, city) are written as they are; every other value (free text such
  as an address or a health summary, a plugin type, a key no field declares) is
  written as its length only, ``<text, N chars>``; files and nested values are
  not written at all;
- failure details are masked the same way.

Appending never breaks a citizen's turn: a store that fails is logged (the error
type only) and the turn goes on. Entries older than the retention period are
purged every few minutes by the process that appends.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import threading
import time
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from si_agent.audit.model import AUDITED_STATES, AuditEntry, utc_now
from si_agent.audit.store import AuditStore
from si_agent.config.model import MASKED_TYPES, Business
from si_agent.privacy import redact_text
from si_agent.validators import mask

if TYPE_CHECKING:
    from si_agent.jobs.model import Job

log = logging.getLogger(__name__)

PURGE_EVERY = 300.0  # seconds between retention purges in one process
APPLICATION_NO = "application_no"  # the result key executors put the application number under
NOT_WRITTEN = "<not written>"  # a file or a nested value (photos, step data)
# Field types whose values come from a closed set or are plain numbers and dates:
# they cannot carry a free sentence, so they are written as they are.
CLOSED_TYPES: frozenset[str] = frozenset(
    {"enum", "multi_enum", "bucket", "integer", "number", "year", "date", "city"})
_MAX_DETAIL = 200


class AuditLog:
    """Records submissions and state changes in ``store``; see the module docstring."""

    def __init__(self, store: AuditStore, *, pepper: str, retention_days: int = 180) -> None:
        if not pepper:
            raise ValueError("the audit log needs a pepper to hash user ids")
        self.store = store
        self._pepper = pepper.encode("utf-8")
        self.retention = timedelta(days=retention_days)
        self._next_purge = 0.0
        self._purge_lock = threading.Lock()

    def __repr__(self) -> str:
        return f"AuditLog({self.store!r}, retention={self.retention.days} days)"

    def user_ref(self, session_id: str) -> str:
        """The hashed user of a session id: 32 hex digits of HMAC-SHA256."""
        digest = hmac.new(self._pepper, session_id.encode("utf-8"), hashlib.sha256)
        return digest.hexdigest()[:32]

    # -- what the flow records -------------------------------------------------------

    def state_change(self, session_id: str, business: Business | None, state: str, *,
                     job: Job | None, values: Mapping[str, Any]) -> None:
        """The session entered ``state`` (recorded if audited: executing, done, failed)
        in a turn that was just saved; ``values`` are its fields then."""
        if state not in AUDITED_STATES or business is None:
            return
        self.append(AuditEntry(
            event="state", user=self.user_ref(session_id), business=business.id,
            job_id=job.id if job else None, state=state, outcome=_state_outcome(job),
            application_no=application_no(job.result if job else None),
            values=mask_values(values, business),
            detail=_detail(job) if state == "failed" else None))

    def submission(self, job: Job, business: Business, *, channel: str,
                   result: Mapping[str, Any] | None = None, error: str | None = None) -> None:
        """One run of an executor for ``job``: what was sent (masked) and how it ended."""
        self.append(AuditEntry(
            event="submission", user=self.user_ref(job.session_id), business=business.id,
            job_id=job.id, channel=channel, outcome="failed" if error is not None else "succeeded",
            application_no=application_no(result), values=mask_values(job.values, business),
            detail=_masked_detail(error)))

    def moderation(self, session_id: str, business: Business | None, where: str,
                   action: str, categories: tuple[str, ...]) -> None:
        """A message (``where`` input) or reply (output) the moderation did not pass as
        it was: the action and the list's categories; never the text."""
        self.append(AuditEntry(
            event="moderation", user=self.user_ref(session_id),
            business=business.id if business else "-", outcome=action,
            detail=f"{where}: {', '.join(categories) or '-'}"))

    # -- the store ---------------------------------------------------------------------

    def append(self, entry: AuditEntry) -> None:
        """Append ``entry``; a failing store is logged, never raised."""
        try:
            self.store.append(entry)
            self._maybe_purge()
        except Exception as exc:  # the audit must never break a citizen's turn
            log.warning("audit entry (%s %s of job %s) not written: %s", entry.event,
                        entry.state or entry.outcome, entry.job_id, type(exc).__name__)

    def query(self, business: str | None = None, since: datetime | None = None,
              limit: int = 100) -> list[AuditEntry]:
        """The newest entries first (raises the store's ``StoreUnavailable``)."""
        return self.store.query(business=business, since=since, limit=limit)

    def purge(self) -> None:
        """Drop the entries older than the retention period."""
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


def mask_values(values: Mapping[str, Any], business: Business | None) -> dict[str, str]:
    """``values`` as the audit log may hold them (see the module docstring)."""
    types = {f.key: f.type for f in business.fields} if business else {}
    out: dict[str, str] = {}
    for key, value in values.items():
        kind = types.get(key)
        if value is None:
            continue
        if kind == "multi_enum" and isinstance(value, (list, tuple)) and all(
                isinstance(v, str) for v in value):
            out[key] = ",".join(value)
        elif isinstance(value, (Mapping, list, tuple, bytes)):
            out[key] = NOT_WRITTEN
        elif kind in MASKED_TYPES:
            out[key] = mask(kind, value)
        elif kind == "name":
            text = str(value)
            out[key] = text[:1] + "*" * (len(text) - 1)
        elif kind in CLOSED_TYPES:
            out[key] = str(value)
        else:
            out[key] = text_length(str(value))
    return out


def text_length(text: str) -> str:
    """What the audit log writes for a free-text value: its length, never its words."""
    return f"<text, {len(text)} chars>"


def application_no(result: Mapping[str, Any] | None) -> str | None:
    number = (result or {}).get(APPLICATION_NO)
    return str(number) if number else None


def _state_outcome(job: Job | None) -> str:
    if job is None:
        return "concluded"  # a consultation's answer: nothing was submitted
    return job.status


def _detail(job: Job | None) -> str | None:
    return _masked_detail(job.error.message) if job is not None and job.error else None


def _masked_detail(text: str | None) -> str | None:
    return redact_text(text)[:_MAX_DETAIL] if text else None
