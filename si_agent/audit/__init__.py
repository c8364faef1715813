"""The audit log: every submission and every state change to executing, done or failed.

    audit = create_audit_log(settings, session_store)   # AuditLog over the configured store
    audit.query(business="card_apply", since=parse_since("7d"))

``Settings.audit_store`` names the store: ``sqlite`` (a table in
``Settings.audit_db``, the embedded run), ``redis`` (a Redis Stream, production),
``memory`` (one process, tests), or ``auto``: Redis when the sessions are in
Redis, else SQLite. An unknown name raises ``UnknownBackendError`` listing the
valid ones. What an entry holds and how it is kept: ``docs/audit.md``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import timedelta

from si_agent.audit.log import AuditLog, mask_values
from si_agent.audit.model import AUDITED_STATES, AuditEntry, StaffAction, parse_since
from si_agent.audit.store import AuditStore, MemoryAuditStore
from si_agent.config.settings import Settings
from si_agent.errors import UnknownBackendError

__all__ = [
    "AUDITED_STATES", "AUDIT_STORES", "AuditEntry", "AuditLog", "AuditStore",
    "MemoryAuditStore", "StaffAction", "create_audit_log", "create_audit_store", "mask_values",
    "parse_since",
]

log = logging.getLogger(__name__)

AUDIT_STORES = ("auto", "memory", "sqlite", "redis")


def create_audit_log(settings: Settings, session_store: object | None = None) -> AuditLog:
    """The audit log configured by ``settings`` (``auto`` follows ``session_store``)."""
    return AuditLog(create_audit_store(settings, session_store),
                    pepper=settings.audit_pepper or settings.jwt_secret,
                    retention_days=settings.audit_retention_days)


def create_audit_store(settings: Settings, session_store: object | None = None) -> AuditStore:
    """The store named by ``settings.audit_store``."""
    name = settings.audit_store
    if name == "auto":
        name = "redis" if getattr(session_store, "name", None) == "redis" else "sqlite"
    factory = _FACTORIES.get(name)
    if factory is None:
        raise UnknownBackendError("audit store", settings.audit_store, AUDIT_STORES)
    store = factory(settings, session_store)
    log.info("audit log: %r", store)
    return store


def _memory(settings: Settings, session_store: object | None) -> AuditStore:
    return MemoryAuditStore()


def _sqlite(settings: Settings, session_store: object | None) -> AuditStore:
    from si_agent.audit.sqlite import SQLiteAuditStore

    return SQLiteAuditStore(settings.audit_db)


def _redis(settings: Settings, session_store: object | None) -> AuditStore:
    from si_agent.audit.redis import RedisAuditStore, audit_key
    from si_agent.session.redis import RedisStore

    # The sessions' client when they are in Redis; else one made the same way.
    client = getattr(session_store, "client", None) if getattr(
        session_store, "name", None) == "redis" else None
    if client is None:
        client = RedisStore(settings.redis_url, prefix=settings.redis_prefix).client
    return RedisAuditStore(client, audit_key(settings.redis_prefix),
                           retention=timedelta(days=settings.audit_retention_days))


_FACTORIES: dict[str, Callable[[Settings, object | None], AuditStore]] = {
    "memory": _memory,
    "sqlite": _sqlite,
    "redis": _redis,
}
