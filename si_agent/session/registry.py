"""Choosing the session store by name (``Settings.session_store``).

``auto`` uses Redis when ``Settings.redis_url`` answers a PING within half a
second, else the SQLite file at ``Settings.sessions_db``, and logs which and
why. An unknown name raises ``UnknownBackendError`` listing the valid names.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable

from si_agent.config.settings import Settings
from si_agent.errors import UnknownBackendError
from si_agent.session.base import SessionStore
from si_agent.session.memory import MemoryStore
from si_agent.session.redis import RedisStore, mask_url, redis_reachable
from si_agent.session.sqlite import SQLiteStore

logger = logging.getLogger(__name__)

STORES = ("memory", "sqlite", "redis", "auto")

AUTO_PROBE_TIMEOUT = 0.5


def create_store(settings: Settings) -> SessionStore:
    """The session store named by ``settings.session_store``, configured from ``settings``."""
    name = settings.session_store.strip().lower()
    factory = _FACTORIES.get(name)
    if factory is None:
        raise UnknownBackendError("session store", settings.session_store, STORES)
    return factory(settings)


def mark_key(settings: Settings) -> bytes:
    """The key of the expiry marks' HMAC (``base.expiry_mark``): a per-deployment
    secret that every process of the deployment shares. The audit pepper first (it
    is meant to stay stable), else the upload key, else the JWT secret."""
    secret = settings.audit_pepper or settings.upload_key or settings.jwt_secret
    return hashlib.sha256(b"si_agent expiry mark key\0" + secret.encode("utf-8")).digest()


def _memory(settings: Settings) -> SessionStore:
    return MemoryStore(ttl=settings.session_ttl, mark_key=mark_key(settings))


def _sqlite(settings: Settings) -> SessionStore:
    return SQLiteStore(settings.sessions_db, ttl=settings.session_ttl,
                       mark_key=mark_key(settings))


def _redis(settings: Settings) -> SessionStore:
    return RedisStore(settings.redis_url, prefix=settings.redis_prefix, ttl=settings.session_ttl,
                      mark_key=mark_key(settings))


def _auto(settings: Settings) -> SessionStore:
    url = mask_url(settings.redis_url)
    try:
        reachable = redis_reachable(settings.redis_url, timeout=AUTO_PROBE_TIMEOUT)
        why = f"Redis at {url} did not answer PING within {AUTO_PROBE_TIMEOUT} s"
    except ImportError:
        reachable = False
        why = "the 'redis' package is not installed"
    if reachable:
        logger.info("session store 'auto': using redis at %s (it answered PING)", url)
        return _redis(settings)
    logger.warning(
        "session store 'auto': using sqlite at %s because %s; sessions are shared only "
        "by processes on this machine (set SI_SESSION_STORE=redis to require Redis)",
        settings.sessions_db,
        why,
    )
    return _sqlite(settings)


_FACTORIES: dict[str, Callable[[Settings], SessionStore]] = {
    "memory": _memory,
    "sqlite": _sqlite,
    "redis": _redis,
    "auto": _auto,
}
