"""The token denylist: revoked token ids, kept next to the sessions until they expire.

Logging out, resetting a session and reusing a refresh token revoke tokens
(``si_agent.server.revocation``); every request checks its token here. The
denylist lives in the session store's backend, so every process that shares the
sessions shares it too:

- ``memory``: a dict in this process (tests, one-process demos);
- ``sqlite``: a table ``revoked_tokens`` in the session file;
- ``redis``: one key per entry under the store's prefix (``…:revoked:``), with a
  Redis expiry.

An entry is a short text key (a ``jti``, a refresh family) with the time it may be
forgotten: the end of the longest life of any token it revokes. Two methods:

- ``add(key, expires_at)`` adds it atomically and says whether it was not there
  yet (a refresh token is used once: the second ``add`` of its id is a reuse);
- ``contains(*keys)`` says whether any of them is listed: one lookup per request.

A backend that cannot be reached raises ``StoreUnavailable`` (the API answers 503:
it fails closed, never treating a token as not revoked because it could not ask).
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from si_agent.errors import StoreUnavailable, UnknownBackendError
from si_agent.jobs.sqlite import immediate
from si_agent.sqlite_connections import ThreadConnections

logger = logging.getLogger(__name__)

__all__ = ["MemoryDenylist", "RedisDenylist", "SQLiteDenylist", "TokenDenylist",
           "create_denylist"]

_PURGE_EVERY = 300.0

_SCHEMA = """
CREATE TABLE IF NOT EXISTS revoked_tokens (
    key        TEXT PRIMARY KEY,
    expires_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS revoked_tokens_expires_at ON revoked_tokens (expires_at);
"""

# KEYS[1] = the entry, ARGV[1] = its life in ms. SET NX is the atomic "first use"
# (returns 1); a listed key keeps the later of its two expiries (returns 0).
_ADD_SCRIPT = """
if redis.call('SET', KEYS[1], '1', 'NX', 'PX', ARGV[1]) then
  return 1
end
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[1]) then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
end
return 0
"""


@runtime_checkable
class TokenDenylist(Protocol):
    """Revoked token keys with their expiry (see the module docstring)."""

    def add(self, key: str, expires_at: float) -> bool:
        """List ``key`` until ``expires_at`` (epoch seconds); whether it was not listed."""
        ...

    def contains(self, *keys: str) -> bool:
        """Whether any of ``keys`` is listed and not expired."""
        ...


class MemoryDenylist:
    """The denylist in this process's memory."""

    def __init__(self) -> None:
        self._entries: dict[str, float] = {}
        self._lock = threading.Lock()
        self._next_purge = time.time() + _PURGE_EVERY

    def add(self, key: str, expires_at: float) -> bool:
        now = time.time()
        with self._lock:
            self._purge(now)
            known = self._entries.get(key)
            if known is not None and known > now:
                self._entries[key] = max(known, expires_at)
                return False
            if expires_at > now:
                self._entries[key] = expires_at
            return True

    def contains(self, *keys: str) -> bool:
        now = time.time()
        entries = self._entries  # a dict read is atomic; no lock on the hot path
        return any(entries.get(key, 0.0) > now for key in keys)

    def _purge(self, now: float) -> None:
        if now < self._next_purge:
            return
        self._next_purge = now + _PURGE_EVERY
        for key in [k for k, expires in self._entries.items() if expires <= now]:
            del self._entries[key]


class SQLiteDenylist:
    """The denylist in the session store's SQLite file (table ``revoked_tokens``)."""

    def __init__(self, path: str | Path, *, timeout: float = 5.0) -> None:
        self.path = Path(path)
        self._connections = ThreadConnections(self.path, timeout)
        self._connections.create(_SCHEMA, "token denylist", private=True)
        self._next_purge = 0.0

    def add(self, key: str, expires_at: float) -> bool:
        now = time.time()
        try:
            conn = self._connections.get()
            with immediate(conn):  # SQLite's write lock: read-then-write is one step
                self._maybe_purge(conn, now)
                row = conn.execute("SELECT expires_at FROM revoked_tokens WHERE key = ?",
                                   (key,)).fetchone()
                if row is not None and row[0] > now:  # listed: keep the later expiry
                    if expires_at > row[0]:
                        conn.execute("UPDATE revoked_tokens SET expires_at = ? WHERE key = ?",
                                     (expires_at, key))
                    return False
                conn.execute("INSERT OR REPLACE INTO revoked_tokens (key, expires_at) "
                             "VALUES (?, ?)", (key, expires_at))
                return True
        except sqlite3.Error as exc:
            raise self._unavailable("write", exc) from exc

    def contains(self, *keys: str) -> bool:
        if not keys:
            return False
        marks = ",".join("?" * len(keys))
        try:
            row = self._connections.get().execute(
                f"SELECT 1 FROM revoked_tokens WHERE key IN ({marks}) AND expires_at > ? LIMIT 1",
                (*keys, time.time())).fetchone()
        except sqlite3.Error as exc:
            raise self._unavailable("read", exc) from exc
        return row is not None

    def _maybe_purge(self, conn: sqlite3.Connection, now: float) -> None:
        if now < self._next_purge:
            return
        self._next_purge = now + _PURGE_EVERY
        conn.execute("DELETE FROM revoked_tokens WHERE expires_at <= ?", (now,))

    def _unavailable(self, operation: str, exc: BaseException) -> StoreUnavailable:
        return StoreUnavailable(f"cannot {operation} the token denylist in {self.path}: {exc}")


class RedisDenylist:
    """The denylist in Redis: ``prefix + key`` per entry, expiring with it."""

    def __init__(self, client: Any, prefix: str) -> None:
        import redis

        self._client = client
        self.prefix = prefix
        self._errors: tuple[type[BaseException], ...] = (redis.RedisError, OSError)
        self._add_script = client.register_script(_ADD_SCRIPT)

    def add(self, key: str, expires_at: float) -> bool:
        ttl_ms = int((expires_at - time.time()) * 1000)
        if ttl_ms <= 0:
            return True  # a token already expired needs no entry: it is refused anyway
        try:
            return bool(self._add_script(keys=[self.prefix + key], args=[ttl_ms],
                                         client=self._client))
        except self._errors as exc:
            raise self._unavailable("write", exc) from exc

    def contains(self, *keys: str) -> bool:
        if not keys:
            return False
        try:
            return bool(self._client.exists(*(self.prefix + key for key in keys)))
        except self._errors as exc:
            raise self._unavailable("read", exc) from exc

    def _unavailable(self, operation: str, exc: BaseException) -> StoreUnavailable:
        return StoreUnavailable(f"cannot {operation} the token denylist in Redis "
                                f"({type(exc).__name__}: {exc})")


def create_denylist(session_store: object) -> TokenDenylist:
    """The denylist in ``session_store``'s backend (by its ``name``)."""
    name = getattr(session_store, "name", None)
    if name == "memory":  # every app on the same MemoryStore shares its list
        return getattr(session_store, "denylist", None) or MemoryDenylist()
    if name == "sqlite":
        return SQLiteDenylist(session_store.path)  # type: ignore[attr-defined]
    if name == "redis":
        prefix = session_store.prefix.removesuffix("session:") + "revoked:"  # type: ignore[attr-defined]
        return RedisDenylist(session_store.client, prefix)  # type: ignore[attr-defined]
    raise UnknownBackendError("token denylist for session store", str(name),
                              ("memory", "sqlite", "redis"))
