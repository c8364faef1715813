"""The job record: one submission of a business's values to its executor.

A job is written *before* anything touches the outside world, and every change
to it is a compare-and-set on ``version``, so exactly one process runs it::

    (queued) ──claim──▶ running ──▶ succeeded | failed
                           │
                           └── stale (its process died or its lease ran out):
                               claimed again and re-run with the same idempotency
                               key if the executor is resumable; otherwise failed
                               as "outcome unknown", so nothing is submitted twice.

A job whose process is found dead is not taken over at once: the first process
to find it so records when (``owner_gone_at``, ``seen_gone``), and the job is
stale only a grace period later (``SI_JOB_TAKEOVER_GRACE``), so the dead
attempt's requests still in flight (a web form POST a portal holds) land or die
before the next attempt starts. A lease that ran out (a process elsewhere) is
stale at once: the lease is already longer than the grace.

The turn that confirms records its job already claimed (``running``, owned by
its process), which runs it right after saving the session; ``queued`` is for
jobs handed to a queue whose worker claims them.
"""

from __future__ import annotations

import os
import socket
import time
import uuid
from typing import Any, Literal

from pydantic import BaseModel, Field

JobStatus = Literal["queued", "running", "succeeded", "failed"]
TERMINAL: frozenset[str] = frozenset({"succeeded", "failed"})
def _pid_namespace() -> str:
    try:
        return os.readlink("/proc/self/ns/pid").removeprefix("pid:")
    except OSError:
        return ""


# Where a process lives: machines (containers) that share a host name but not a
# PID namespace are different places; a PID means something only in its own.
_PLACE = f"{socket.gethostname()}{_pid_namespace()}"
_TOKEN = uuid.uuid4().hex[:8]  # tells this process from a later one with a reused PID


def _new_token() -> None:
    global _TOKEN
    _TOKEN = uuid.uuid4().hex[:8]


os.register_at_fork(after_in_child=_new_token)  # a forked worker is a process of its own


def this_process() -> str:
    """``place:pid:token`` of the calling process (a job's owner)."""
    return f"{_PLACE}:{os.getpid()}:{_TOKEN}"


def owner_is_dead(owner: str | None) -> bool:
    """True when ``owner`` is certainly gone: a process of this place whose PID no
    longer exists. Elsewhere (or a reused PID) only the job's lease can tell."""
    if not owner:
        return True
    if owner == this_process():
        return False
    place, _, rest = owner.partition(":")
    pid = rest.partition(":")[0]
    if place != _PLACE or not pid.isdigit():
        return False
    if int(pid) == os.getpid():
        return True  # this PID, another token: an earlier process that died
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


class JobError(BaseModel):
    """Why a job failed, for the citizen (Chinese) and the dialogue."""

    message: str
    field_errors: dict[str, str] = Field(default_factory=dict)
    retryable: bool = False  # only an executor that says so may be retried
    status: int | None = None
    unknown: bool = False  # the process died mid-run: whether it was submitted is unknown
    resume: dict[str, Any] | None = None  # the executor's state for the flow's next submission


class Job(BaseModel):
    id: str
    session_id: str
    business_id: str
    idempotency_key: str
    values: dict[str, Any] = Field(default_factory=dict)
    # What the flow's last failed submission left for this one (ExecutorError.resume).
    resume: dict[str, Any] | None = None
    status: JobStatus = "queued"
    attempts: int = 0
    result: dict[str, Any] | None = None
    error: JobError | None = None
    progress: str | None = None
    owner: str | None = None
    lease_until: float = 0.0
    owner_gone_at: float | None = None  # when a process first found the owner's process dead
    long_running: bool = False
    created_at: float = Field(default_factory=time.time)
    updated_at: float = Field(default_factory=time.time)
    finished_at: float | None = None
    version: int = 0

    @property
    def finished(self) -> bool:
        return self.status in TERMINAL

    def stale(self, now: float | None = None, *, grace: float = 0.0) -> bool:
        """Unfinished, and its lease ran out, or its process is gone and was first
        found gone at least ``grace`` seconds ago (``seen_gone``)."""
        if self.finished:
            return False
        now = time.time() if now is None else now
        if now > self.lease_until:
            return True
        if not owner_is_dead(self.owner):
            return False
        return grace <= 0 or (self.owner_gone_at is not None
                              and now >= self.owner_gone_at + grace)

    def seen_gone(self, now: float | None = None) -> Job | None:
        """The job marked as found with its process dead (to save), the first time it
        is found so; None when it is finished, marked already, or its owner lives."""
        if self.finished or self.owner_gone_at is not None or not owner_is_dead(self.owner):
            return None
        return self.model_copy(update={"owner_gone_at": time.time() if now is None else now})
