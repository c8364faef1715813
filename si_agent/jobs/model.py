"""The job record: one submission of a business's values to its executor.

A job is written *before* anything touches the outside world, and every change
to it is a compare-and-set on ``version``, so exactly one process runs it::

    (queued) ──claim──▶ running ──▶ succeeded | failed
                           │
                           └── stale (its process died or its lease ran out):
                               claimed again and re-run with the same idempotency
                               key if the executor is resumable; otherwise failed
                               as "outcome unknown", so nothing is submitted twice.

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
    long_running: bool = False
    created_at: float = Field(default_factory=time.time)
    updated_at: float = Field(default_factory=time.time)
    finished_at: float | None = None
    version: int = 0

    @property
    def finished(self) -> bool:
        return self.status in TERMINAL

    def stale(self, now: float | None = None) -> bool:
        """Unfinished, and its process is gone or its lease ran out."""
        if self.finished:
            return False
        now = time.time() if now is None else now
        return owner_is_dead(self.owner) or now > self.lease_until
