"""What a turn does to the outside world, as data, carried out after the save.

A turn (``flow.turn``) or a job's outcome (``flow.execution``) only records
its effects here: step files to keep or drop, the audited states it entered,
the job it queued. The controller or the job driver carries them out once the
session is saved, so a re-run after a save conflict leaves nothing behind.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from si_agent.audit import AuditLog
from si_agent.config.model import Business
from si_agent.jobs import Job
from si_agent.session.files import StepFiles

if TYPE_CHECKING:
    from si_agent.flow.handoff import HandoffRequest


@dataclass(frozen=True)
class FileOp:
    """One step-file change: ``put`` a file, ``drop`` some (or all), ``touch`` the owner's."""

    kind: Literal["put", "drop", "touch"]
    owner: str
    name: str | None = None
    data: bytes | None = None
    names: tuple[str, ...] | None = None


@dataclass(frozen=True)
class Entered:
    """An audited state entered, with the business and its values at that moment."""

    state: str
    business: Business | None
    values: dict[str, Any]


@dataclass(frozen=True)
class Moderated:
    """A message or reply the moderation masked, refused or flagged (audited)."""

    where: str
    action: str
    categories: tuple[str, ...]
    business: Business | None


@dataclass
class Effects:
    """The effects of one turn (or one applied outcome), in order."""

    files: list[FileOp] = field(default_factory=list)
    entered: list[Entered] = field(default_factory=list)
    job: Job | None = None  # the job this turn queued (run after the save)
    applied: Job | None = None  # the finished job whose outcome this turn applied
    moderated: list[Moderated] = field(default_factory=list)
    handoff: HandoffRequest | None = None  # a hand-off ticket to open (flow.handoff)

    def put(self, owner: str, name: str, data: bytes) -> None:
        self.files.append(FileOp("put", owner, name=name, data=data))

    def drop(self, owner: str, names: tuple[str, ...] | None = None) -> None:
        self.files.append(FileOp("drop", owner, names=names))

    def touch(self, owner: str) -> None:
        self.files.append(FileOp("touch", owner))


def carry_out(effects: Effects, session_id: str, files: StepFiles, audit: AuditLog) -> None:
    """Do what ``effects`` records (after its session was saved)."""
    for op in effects.files:
        if op.kind == "put":
            assert op.name is not None and op.data is not None
            files.put(op.owner, op.name, op.data)
        elif op.kind == "drop":
            files.drop(op.owner, op.names)
        else:
            files.touch(op.owner)
    for entry in effects.entered:
        job = effects.job if entry.state == "executing" else effects.applied
        audit.state_change(session_id, entry.business, entry.state, job=job,
                           values=entry.values)
    for m in effects.moderated:
        audit.moderation(session_id, m.business, m.where, m.action, m.categories)
