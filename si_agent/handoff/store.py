"""The ``TicketStore`` protocol and its in-memory backend.

The contract, identical in every backend (``tests/handoff/test_ticket_stores.py``):

* ``save(ticket)`` is a compare-and-set on ``ticket.version`` (0: a new ticket): it
  writes and sets ``version + 1`` on ``ticket`` and returns True, or writes nothing and
  returns False when the stored version differs. It keeps two indexes in the same
  atomic step: the open tickets in arrival order (``open_numbers``) and the open
  ticket of each session (``open_for``); a closed ticket leaves both and is kept
  ``RETENTION`` seconds.
* ``load(number)`` the stored ticket or ``None``.
* ``next_seq(day)`` a number counting from 1 per ``day`` (``"1207"``), never twice.
* Staff presence: ``beat(name, until)`` says a staff member is at the queue until
  ``until`` (their page renews it); ``present(now)`` lists who is; ``leave(name)``.

A backend that cannot reach its storage raises ``StoreUnavailable``.
"""

from __future__ import annotations

import threading
import time
from typing import Protocol, runtime_checkable

from si_agent.handoff.model import Ticket

RETENTION = 30 * 24 * 3600  # seconds a closed ticket is kept


@runtime_checkable
class TicketStore(Protocol):
    name: str

    def load(self, number: str) -> Ticket | None: ...

    def save(self, ticket: Ticket) -> bool: ...

    def open_numbers(self) -> list[str]: ...

    def open_for(self, session_id: str) -> str | None: ...

    def next_seq(self, day: str) -> int: ...

    def beat(self, name: str, until: float) -> None: ...

    def present(self, now: float) -> list[str]: ...

    def leave(self, name: str) -> None: ...


def stored(ticket: Ticket) -> tuple[int, int, str]:
    """``(expected, new version, JSON)`` of a save (the JSON carries the new version)."""
    expected = ticket.version
    return expected, expected + 1, ticket.model_copy(update={"version": expected + 1}) \
        .model_dump_json()


class MemoryTicketStore:
    """Tickets in this process's memory (tests, a single process)."""

    name = "memory"

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._tickets: dict[str, tuple[int, str, float]] = {}  # number -> version, JSON, expires
        self._open: dict[str, float] = {}  # number -> created
        self._sessions: dict[str, str] = {}
        self._seqs: dict[str, int] = {}
        self._present: dict[str, float] = {}

    def load(self, number: str) -> Ticket | None:
        with self._lock:
            record = self._tickets.get(number)
        if record is None or record[2] <= time.time():
            return None
        ticket = Ticket.model_validate_json(record[1])
        ticket.version = record[0]
        return ticket

    def save(self, ticket: Ticket) -> bool:
        expected, version, data = stored(ticket)
        now = time.time()
        with self._lock:
            record = self._tickets.get(ticket.number)
            found = record[0] if record is not None and record[2] > now else 0
            if found != expected:
                return False
            expires = now + RETENTION if not ticket.open else float("inf")
            self._tickets[ticket.number] = (version, data, expires)
            if ticket.open:
                self._open[ticket.number] = ticket.created
                self._sessions[ticket.session_id] = ticket.number
            else:
                self._open.pop(ticket.number, None)
                if self._sessions.get(ticket.session_id) == ticket.number:
                    del self._sessions[ticket.session_id]
        ticket.version = version
        return True

    def open_numbers(self) -> list[str]:
        with self._lock:
            return [n for n, _ in sorted(self._open.items(), key=lambda item: (item[1], item[0]))]

    def open_for(self, session_id: str) -> str | None:
        with self._lock:
            return self._sessions.get(session_id)

    def next_seq(self, day: str) -> int:
        with self._lock:
            self._seqs[day] = self._seqs.get(day, 0) + 1
            return self._seqs[day]

    def beat(self, name: str, until: float) -> None:
        with self._lock:
            self._present[name] = until

    def present(self, now: float) -> list[str]:
        with self._lock:
            return sorted(n for n, until in self._present.items() if until > now)

    def leave(self, name: str) -> None:
        with self._lock:
            self._present.pop(name, None)
