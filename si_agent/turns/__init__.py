"""The turn-event record: one masked event per turn, the citizens' feedback, the reviews.

    turns = create_turn_log(settings, session_store, audit)   # TurnLog over the store
    turns.recent(since=parse_since("7d"))                      # conversations, newest first

``Settings.turn_store`` names the store: ``sqlite`` (its own file, ``Settings.turns_db``),
``redis`` (next to the sessions), ``memory`` (one process, tests), or ``auto``: Redis
when the sessions are in Redis, else SQLite; an unknown name raises
``UnknownBackendError`` listing the valid ones. ``SI_TURN_RETENTION_DAYS`` (default 90)
is how long records are kept. What an event holds: ``si_agent.turns.model``; how it is
masked: ``si_agent.turns.masking``; docs/review.md.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import timedelta

from si_agent.audit import AuditLog
from si_agent.config.settings import Settings
from si_agent.errors import UnknownBackendError
from si_agent.turns.log import Conversation, TurnFacts, TurnLog, TurnView
from si_agent.turns.model import OUTCOMES, Feedback, Review, TurnEvent
from si_agent.turns.store import MemoryTurnStore, TurnStore

__all__ = [
    "OUTCOMES", "TURN_STORES", "Conversation", "Feedback", "MemoryTurnStore", "Review",
    "TurnEvent", "TurnFacts", "TurnLog", "TurnStore", "TurnView", "create_turn_log",
    "create_turn_store",
]

log = logging.getLogger(__name__)

TURN_STORES = ("auto", "memory", "sqlite", "redis")


def create_turn_log(settings: Settings, session_store: object | None, audit: AuditLog) -> TurnLog:
    """The turn log configured by ``settings`` (``auto`` follows ``session_store``)."""
    return TurnLog(create_turn_store(settings, session_store), audit,
                   retention_days=settings.turn_retention_days)


def create_turn_store(settings: Settings, session_store: object | None = None) -> TurnStore:
    name = settings.turn_store
    if name == "auto":
        name = {"redis": "redis", "memory": "memory"}.get(
            getattr(session_store, "name", None) or "", "sqlite")
    factory = _FACTORIES.get(name)
    if factory is None:
        raise UnknownBackendError("turn store", settings.turn_store, TURN_STORES)
    store = factory(settings, session_store)
    log.info("turn-event record: %r", store)
    return store


def _memory(settings: Settings, session_store: object | None) -> TurnStore:
    return MemoryTurnStore()


def _sqlite(settings: Settings, session_store: object | None) -> TurnStore:
    from si_agent.turns.sqlite import SQLiteTurnStore

    return SQLiteTurnStore(settings.turns_db)


def _redis(settings: Settings, session_store: object | None) -> TurnStore:
    from si_agent.session.redis import RedisStore
    from si_agent.turns.redis import RedisTurnStore, turns_prefix

    client = getattr(session_store, "client", None) if getattr(
        session_store, "name", None) == "redis" else None
    if client is None:
        client = RedisStore(settings.redis_url, prefix=settings.redis_prefix).client
    return RedisTurnStore(client, turns_prefix(settings.redis_prefix),
                          retention=timedelta(days=settings.turn_retention_days))


_FACTORIES: dict[str, Callable[[Settings, object | None], TurnStore]] = {
    "memory": _memory,
    "sqlite": _sqlite,
    "redis": _redis,
}
