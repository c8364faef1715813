"""The ``AuditStore`` protocol and its in-memory backend.

The contract, identical in every backend (``tests/audit/test_audit_stores.py``):

* ``append(entry)`` adds one entry; entries are never changed afterwards;
* ``query(business=None, since=None, limit=100)`` returns the newest entries
  first, at or after ``since``, of ``business`` if given, at most ``limit``;
* ``purge(before)`` drops the entries older than ``before`` (retention).
"""

from __future__ import annotations

import threading
from datetime import datetime
from typing import Protocol, runtime_checkable

from si_agent.audit.model import AuditEntry


@runtime_checkable
class AuditStore(Protocol):
    name: str

    def append(self, entry: AuditEntry) -> None:
        """Add ``entry`` (append-only)."""
        ...

    def query(self, business: str | None = None, since: datetime | None = None,
              limit: int = 100) -> list[AuditEntry]:
        """The newest matching entries first, each with its ``id``."""
        ...

    def purge(self, before: datetime) -> None:
        """Drop the entries older than ``before``."""
        ...


def matches(entry: AuditEntry, business: str | None, since: datetime | None) -> bool:
    return (business is None or entry.business == business) and (
        since is None or entry.at >= since)


class MemoryAuditStore:
    """Entries in this process's memory (with ``MemoryStore`` sessions, and tests)."""

    name = "memory"

    def __init__(self) -> None:
        self._entries: list[AuditEntry] = []
        self._next = 1
        self._lock = threading.Lock()

    def append(self, entry: AuditEntry) -> None:
        with self._lock:
            self._entries.append(entry.model_copy(update={"id": str(self._next)}))
            self._next += 1

    def query(self, business: str | None = None, since: datetime | None = None,
              limit: int = 100) -> list[AuditEntry]:
        with self._lock:
            entries = list(self._entries)
        found = [e for e in reversed(entries) if matches(e, business, since)]
        return found[:limit]

    def purge(self, before: datetime) -> None:
        with self._lock:
            self._entries = [e for e in self._entries if e.at >= before]
