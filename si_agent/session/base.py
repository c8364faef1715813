"""The ``SessionStore`` protocol and the record handling every backend shares.

The contract, identical in every backend:

* ``load(session_id)`` returns the stored session, or ``None`` when there is no
  record, it expired (not saved for ``ttl`` seconds) or it cannot be parsed. An
  unreadable record is logged (without personal data) and discarded, so that
  saving a fresh session in its place succeeds instead of conflicting forever.
* ``save(session)`` is an atomic compare-and-set on ``version``: it succeeds only
  if the stored version (0 when there is no live record) equals
  ``session.version``. The record is then written with ``version + 1``, which is
  set on ``session`` in place together with a fresh ``updated_at``, and its TTL
  restarts. Otherwise it raises ``SessionConflict`` and writes nothing; the
  caller reloads the session and runs the turn again.
* ``save(session, job)`` also writes a job record (``si_agent.jobs``) in the same
  atomic step, with its own compare-and-set: a submission is recorded together
  with the session that points to it, and its outcome together with the
  session it is applied to. Jobs live in the same backend (see
  ``si_agent.jobs.create_job_store``).
* ``delete(session_id)`` removes the record; deleting a missing one is fine.
* ``ping()`` says whether the store can be reached; it never raises.
* ``expired(session_id)`` (optional: a store without it never reports an expiry)
  says, once, that a session existed under this id and expired: the first save of
  every session (``session.version == 0``) leaves an *expiry mark* that outlives it
  (``EXPIRY_MARK_TTL``, a keyed digest of the id: ``expiry_mark``, no session
  data); ``delete`` removes it
  (a reset is not an expiry), and ``expired`` returns whether there was one and
  uses it up. The controller asks only when ``load`` found nothing, so a citizen
  who comes back is told "会话已过期" instead of silently starting over.

A store that cannot reach its storage raises ``StoreUnavailable``.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import time
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from pydantic import ValidationError

from si_agent.jobs.model import Job
from si_agent.session.model import Session

logger = logging.getLogger(__name__)

# How long after a session's first save its expiry is still told (a session kept alive
# longer than this by its turns ends without the notice).
EXPIRY_MARK_TTL = 7 * 24 * 3600


@runtime_checkable
class SessionStore(Protocol):
    """Where sessions live between turns; see the module docstring for the contract."""

    name: str

    def load(self, session_id: str) -> Session | None:
        """The stored session, or ``None`` if missing, expired or unreadable."""
        ...

    def save(self, session: Session, job: Job | None = None) -> None:
        """Compare-and-set on ``session.version``; raises ``SessionConflict``.

        With ``job``, its record is written in the same atomic step, itself a
        compare-and-set on ``job.version`` (0: a new job), raising ``JobConflict``;
        on any conflict neither is written.
        """
        ...

    def delete(self, session_id: str) -> None:
        """Forget the session (no error if there is none)."""
        ...

    def ping(self) -> bool:
        """Whether the store is reachable; never raises."""
        ...


@runtime_checkable
class ExpiryMarks(Protocol):
    """A store that remembers which sessions expired (the built-in ones do), so the
    next turn can say so; a store without it simply starts afresh without the notice."""

    def expired(self, session_id: str) -> bool:
        """Whether ``session_id`` expired since its last save; the mark is used up."""
        ...


@dataclass(frozen=True)
class PendingSave:
    """What one ``save`` writes: the record as JSON and the version it expects."""

    session_id: str
    expected: int
    version: int
    updated_at: float
    data: str

    def apply(self, session: Session) -> None:
        """Mirror a successful write on the caller's object."""
        session.version = self.version
        session.updated_at = self.updated_at


def prepare_save(session: Session) -> PendingSave:
    """Serialise ``session`` as it will be stored, without touching it yet."""
    updated_at = time.time()
    version = session.version + 1
    stored = session.model_copy(update={"version": version, "updated_at": updated_at})
    return PendingSave(
        session_id=session.session_id,
        expected=session.version,
        version=version,
        updated_at=updated_at,
        data=stored.model_dump_json(),
    )


def parse_record(
    data: str | bytes | None, version: object, session_id: str, backend: str
) -> Session | None:
    """The session in a stored record, or ``None`` (logged) if it is unreadable.

    ``version`` is the store's own version (column, hash field) and wins over
    the one inside the JSON, since it is what the compare-and-set checks.
    """
    stored_version = as_version(version)
    if stored_version is None:
        _log_unreadable(backend, session_id, "missing or invalid version")
        return None
    try:
        session = Session.model_validate_json(data or "")
    except ValidationError as exc:
        _log_unreadable(backend, session_id, _summarise(exc))
        return None
    if session.session_id != session_id:
        _log_unreadable(backend, session_id, "record belongs to another session id")
        return None
    session.version = stored_version
    return session


def as_version(raw: object) -> int | None:
    """A stored version as a non-negative int, or ``None`` if it is not one."""
    if isinstance(raw, bool):
        return None
    if isinstance(raw, int):
        value = raw
    elif isinstance(raw, (str, bytes)):
        try:
            value = int(raw)
        except ValueError:
            return None
    else:
        return None
    return value if value >= 0 else None


def check_ttl(ttl: float) -> float:
    """``ttl`` if it is a positive number of seconds, else ``ValueError``."""
    if isinstance(ttl, bool) or not isinstance(ttl, (int, float)) or ttl <= 0:
        raise ValueError(f"session ttl must be a positive number of seconds, got {ttl!r}")
    return ttl


def session_ref(session_id: str) -> str:
    """A stable, non-reversible reference to a session id for logs.

    Session ids may be channel user ids (phone numbers, open ids), so logs
    carry a short digest instead.
    """
    return "sid#" + hashlib.sha256(session_id.encode("utf-8")).hexdigest()[:12]


def expiry_mark(session_id: str, key: bytes | None = None) -> str:
    """The key of a session's expiry mark: a digest of its id, never the id itself.

    With ``key`` (a per-deployment secret, ``registry.mark_key``) it is an HMAC, so
    whoever reads the store cannot test a guessed user id (a phone number) against
    the marks; without one, a labelled SHA-256 (stores built directly, in tests).
    """
    data = session_id.encode("utf-8")
    if key:
        return hmac.new(key, b"si_agent expiry mark\0" + data, hashlib.sha256).hexdigest()[:32]
    return hashlib.sha256(b"si_agent expiry mark\0" + data).hexdigest()[:32]


def _summarise(exc: ValidationError) -> str:
    # Only locations and error types: pydantic's messages quote the input values.
    parts = [
        f"{'.'.join(str(p) for p in err['loc']) or '<root>'}: {err['type']}"
        for err in exc.errors(include_input=False)[:3]
    ]
    more = exc.error_count() - len(parts)
    return "; ".join(parts) + (f" (+{more} more)" if more > 0 else "")


def _log_unreadable(backend: str, session_id: str, reason: str) -> None:
    logger.warning(
        "%s session store: discarding unreadable record for %s (%s)",
        backend,
        session_ref(session_id),
        reason,
    )
