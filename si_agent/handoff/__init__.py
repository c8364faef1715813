"""Hand-off to a person: tickets, the queue's rules, and where tickets are kept.

    store = create_ticket_store(session_store)   # memory, sqlite or redis, like the sessions
    desk = Desk(store, hours=OfficeHours.parse(settings.handoff_hours), capacity=3)

``model`` (``Ticket``, its messages and states), ``store`` (the ``TicketStore`` protocol
and the memory backend), ``sqlite`` and ``redis`` (the others), ``desk`` (the rules:
opening, taking under a lease, replying, handing back, closing). The turn's side is
``si_agent.flow.handoff``; the staff's, ``si_agent.server.console.handoff``.
See ``docs/handoff.md``.
"""

from __future__ import annotations

from si_agent.errors import UnknownBackendError
from si_agent.handoff.desk import Desk, Offer, Opened
from si_agent.handoff.model import Message, Outcome, Reason, Ticket, TicketState, Turn
from si_agent.handoff.store import MemoryTicketStore, TicketStore

__all__ = ["Desk", "MemoryTicketStore", "Message", "Offer", "Opened", "Outcome", "Reason",
           "Ticket", "TicketState", "TicketStore", "Turn", "create_ticket_store"]


def create_ticket_store(session_store: object) -> TicketStore:
    """The ticket store sharing ``session_store``'s backend (by its ``name``)."""
    name = getattr(session_store, "name", None)
    if name == "memory":
        return MemoryTicketStore()
    if name == "sqlite":
        from si_agent.handoff.sqlite import SQLiteTicketStore

        return SQLiteTicketStore(session_store.path)  # type: ignore[attr-defined]
    if name == "redis":
        from si_agent.handoff.redis import RedisTicketStore, handoff_prefix

        return RedisTicketStore(session_store.client,  # type: ignore[attr-defined]
                                handoff_prefix(session_store.prefix))  # type: ignore[attr-defined]
    raise UnknownBackendError("hand-off ticket store for session store", str(name),
                              ("memory", "sqlite", "redis"))
