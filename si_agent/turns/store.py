"""The ``TurnStore`` protocol, the records' JSON form, and the in-memory backend.

The contract, identical in every backend (``tests/turns/test_turn_stores.py``):

* ``append(record)`` adds a turn event, a feedback or a review; never changed after;
* ``conversation(conversation)`` returns that conversation's records, oldest first;
* ``recent(since=None, limit=100)`` returns the ids of the conversations with a record
  at or after ``since``, the most recently active first, at most ``limit``;
* ``conversations(ids)`` returns ``conversation`` of each id at once (a page, a report);
* ``purge(before)`` drops every record older than ``before`` (retention).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from datetime import datetime
from typing import Annotated, Protocol, runtime_checkable

from pydantic import Field, TypeAdapter

from si_agent.turns.model import Feedback, Moderation, Review, TurnEvent, TurnRecord

_RECORD: TypeAdapter[TurnRecord] = TypeAdapter(
    Annotated[TurnEvent | Feedback | Review | Moderation, Field(discriminator="kind")])


def dump(record: TurnRecord) -> str:
    """The stored JSON of ``record`` (without the store's id)."""
    return record.model_dump_json(exclude={"id"})


def load(data: str | bytes, record_id: str | None = None) -> TurnRecord:
    record = _RECORD.validate_json(data)
    if record_id is not None:
        record.id = record_id  # just parsed, nobody else holds it: no copy
    return record


@runtime_checkable
class TurnStore(Protocol):
    name: str

    def append(self, record: TurnRecord) -> None:
        """Add ``record`` (append-only)."""
        ...

    def conversation(self, conversation: str) -> list[TurnRecord]:
        """The records of ``conversation``, oldest first, each with its ``id``."""
        ...

    def recent(self, since: datetime | None = None, limit: int = 100) -> list[str]:
        """Conversation ids active at or after ``since``, most recently active first."""
        ...

    def conversations(self, ids: Sequence[str]) -> dict[str, list[TurnRecord]]:
        """The records of each of ``ids`` (as ``conversation``), in one round trip or few."""
        ...

    def purge(self, before: datetime) -> None:
        """Drop the records older than ``before``."""
        ...


class MemoryTurnStore:
    """Records in this process's memory (with ``MemoryStore`` sessions, and tests): the
    newest ``max_records`` only, so a long-running process (or the console's hit-testing
    sandbox) does not grow without bound."""

    name = "memory"

    def __init__(self, max_records: int = 10_000) -> None:
        self.max_records = max_records
        self._records: list[TurnRecord] = []
        self._next = 1
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return "MemoryTurnStore()"

    def append(self, record: TurnRecord) -> None:
        with self._lock:
            self._records.append(record.model_copy(update={"id": str(self._next)}))
            self._next += 1
            if len(self._records) > self.max_records:
                del self._records[: len(self._records) - self.max_records]

    def conversation(self, conversation: str) -> list[TurnRecord]:
        with self._lock:
            return [r for r in self._records if r.conversation == conversation]

    def recent(self, since: datetime | None = None, limit: int = 100) -> list[str]:
        with self._lock:
            records = list(self._records)
        found: list[str] = []
        for r in reversed(records):
            if since is not None and r.at < since:
                break
            if r.conversation not in found:
                found.append(r.conversation)
                if len(found) == limit:
                    break
        return found

    def conversations(self, ids: Sequence[str]) -> dict[str, list[TurnRecord]]:
        wanted = set(ids)
        found: dict[str, list[TurnRecord]] = {i: [] for i in ids}
        with self._lock:
            for r in self._records:
                if r.conversation in wanted:
                    found[r.conversation].append(r)
        return found

    def purge(self, before: datetime) -> None:
        with self._lock:
            self._records = [r for r in self._records if r.at >= before]
