"""Choosing the session store by name (``Settings.session_store``).

``auto`` with ``SI_REDIS_URL`` set uses Redis there, and only there: every
process of a deployment must share one store, so a Redis that is briefly down
at start is waited for (``AUTO_WAIT`` seconds, a PING every ``AUTO_RETRY_EVERY``)
and then the start fails loudly (``StoreUnavailable``) instead of falling back
to a SQLite file of this machine's own. With no Redis URL configured, ``auto``
tries the local default Redis once (``AUTO_PROBE_TIMEOUT``) and uses the SQLite
file at ``Settings.sessions_db`` when it does not answer; it logs which and why.
An unknown name raises ``UnknownBackendError`` listing the valid names.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Callable

from si_agent.config.settings import Settings
from si_agent.errors import StoreUnavailable, UnknownBackendError
from si_agent.session.base import SessionStore
from si_agent.session.memory import MemoryStore
from si_agent.session.redis import RedisStore, mask_url, redis_reachable
from si_agent.session.sqlite import SQLiteStore

logger = logging.getLogger(__name__)

STORES = ("memory", "sqlite", "redis", "auto")

AUTO_PROBE_TIMEOUT = 0.5
AUTO_WAIT = 5.0  # seconds a configured Redis is waited for at start
AUTO_RETRY_EVERY = 0.5


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
    if "redis_url" in settings.model_fields_set:  # SI_REDIS_URL is set: Redis or nothing
        if not _wait_for_redis(settings.redis_url, url):
            raise StoreUnavailable(
                f"session store 'auto': SI_REDIS_URL is set but Redis at {url} did not answer "
                f"PING within {AUTO_WAIT:g} s; start Redis (or fix SI_REDIS_URL), or unset "
                "SI_REDIS_URL / set SI_SESSION_STORE=sqlite to use a SQLite file of this "
                "machine only")
        logger.info("session store 'auto': using redis at %s (SI_REDIS_URL)", url)
        return _redis(settings)
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
        "session store 'auto': using sqlite at %s because SI_REDIS_URL is not set and %s; "
        "sessions are shared only by processes on this machine (set SI_REDIS_URL, or "
        "SI_SESSION_STORE=redis, to require Redis)",
        settings.sessions_db,
        why,
    )
    return _sqlite(settings)


def _wait_for_redis(raw_url: str, url: str) -> bool:
    """Whether Redis answers a PING within ``AUTO_WAIT`` seconds (a try every
    ``AUTO_RETRY_EVERY``); a missing ``redis`` package is ``StoreUnavailable``."""
    deadline = time.monotonic() + AUTO_WAIT
    tries = 0
    while True:
        tries += 1
        try:
            if redis_reachable(raw_url, timeout=AUTO_PROBE_TIMEOUT):
                return True
        except ImportError as exc:
            raise StoreUnavailable(f"session store 'auto': SI_REDIS_URL is set but {exc}") from exc
        if time.monotonic() + AUTO_RETRY_EVERY > deadline:
            return False
        if tries == 1:
            logger.warning("session store 'auto': Redis at %s does not answer yet; waiting up "
                           "to %g s", url, AUTO_WAIT)
        time.sleep(AUTO_RETRY_EVERY)


_FACTORIES: dict[str, Callable[[Settings], SessionStore]] = {
    "memory": _memory,
    "sqlite": _sqlite,
    "redis": _redis,
    "auto": _auto,
}
