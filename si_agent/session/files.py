"""Step files: images a photo step keeps for a later step or for the submission.

The ID-card step keeps the card's portrait so the face step can compare the
selfie with it; the ID-photo step keeps the cropped photo that goes to the
backend. These are biometric data, so they are held no longer than the session
(the store's TTL, renewed by every turn of the flow), dropped when the business
ends, never logged, and encrypted (Fernet) whenever they leave this process:

- ``memory`` sessions: a dict in this process (nothing leaves it);
- ``sqlite`` sessions: a ``step_files`` table in the sessions' file;
- ``redis`` sessions: one hash per flow, expiring with the session.

So a second worker answering the face upload finds the portrait the first one
read. The key comes from ``SI_UPLOAD_KEY`` when set, else it is derived from
``SI_JWT_SECRET`` (HKDF, its own label); workers sharing sessions already share
both. Files are addressed by an ``owner`` (session and flow) and a name.
"""

from __future__ import annotations

import base64
import logging
import os
import sqlite3
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from cryptography.fernet import Fernet, InvalidToken
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from si_agent.errors import StoreUnavailable, UnknownBackendError
from si_agent.sqlite_connections import ThreadConnections

if TYPE_CHECKING:
    from redis import Redis

log = logging.getLogger(__name__)

_LABEL = b"si_agent step files v1"


def file_key(secret: str) -> bytes:
    """A Fernet key for step files, derived from a deployment secret."""
    raw = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=_LABEL).derive(
        secret.encode())
    return base64.urlsafe_b64encode(raw)


class StepFiles(Protocol):
    """Short-lived binary files of one flow (see the module docstring)."""

    def put(self, owner: str, name: str, data: bytes) -> None: ...

    def get(self, owner: str, name: str) -> bytes | None:
        """The file, or ``None`` when it was never kept, expired or cannot be read."""
        ...

    def drop(self, owner: str, names: tuple[str, ...] | None = None) -> None:
        """Forget ``names`` of ``owner`` (all of them when ``None``)."""
        ...

    def touch(self, owner: str) -> None:
        """Start ``owner``'s files' TTL again (the flow is still going on)."""
        ...


class MemoryStepFiles:
    """Files in this process (with ``MemoryStore`` sessions)."""

    def __init__(self, ttl: float) -> None:
        self.ttl = ttl
        self._files: dict[str, dict[str, tuple[bytes, float]]] = {}
        self._lock = threading.Lock()

    def _purge(self, now: float) -> None:
        for gone in [o for o, files in self._files.items()
                     if all(exp <= now for _, exp in files.values())]:
            del self._files[gone]

    def put(self, owner: str, name: str, data: bytes) -> None:
        now = time.monotonic()
        with self._lock:
            self._purge(now)
            self._files.setdefault(owner, {})[name] = (data, now + self.ttl)

    def get(self, owner: str, name: str) -> bytes | None:
        now = time.monotonic()
        with self._lock:
            self._purge(now)
            data, expires = self._files.get(owner, {}).get(name, (None, 0.0))
        return data if expires > now else None

    def touch(self, owner: str) -> None:
        expires = time.monotonic() + self.ttl
        with self._lock:
            files = self._files.get(owner, {})
            for name, (data, _) in files.items():
                files[name] = (data, expires)

    def drop(self, owner: str, names: tuple[str, ...] | None = None) -> None:
        with self._lock:
            if names is None:
                self._files.pop(owner, None)
                return
            for name in names:
                self._files.get(owner, {}).pop(name, None)


class _Sealed:
    """Encrypts on the way out of the process, decrypts on the way back."""

    def __init__(self, key: bytes) -> None:
        self._fernet = Fernet(key)

    def seal(self, data: bytes) -> bytes:
        return self._fernet.encrypt(data)

    def open(self, token: bytes | None) -> bytes | None:
        if token is None:
            return None
        try:
            return self._fernet.decrypt(token)
        except InvalidToken:  # another key, or tampered with
            return None


class SQLiteStepFiles(_Sealed):
    """Files in a ``step_files`` table of the sessions' SQLite file, encrypted."""

    _SCHEMA = """
    CREATE TABLE IF NOT EXISTS step_files (
        owner      TEXT NOT NULL,
        name       TEXT NOT NULL,
        data       BLOB NOT NULL,
        created_at REAL NOT NULL,
        PRIMARY KEY (owner, name)
    );
    """

    def __init__(self, path: str | os.PathLike[str], ttl: float, key: bytes) -> None:
        super().__init__(key)
        self.path = Path(path)
        self.ttl = ttl
        self._connections = ThreadConnections(self.path, 5.0)
        try:
            self._connection().executescript(self._SCHEMA)
        except sqlite3.Error as exc:
            raise StoreUnavailable(f"cannot open step files in {self.path}: {exc}") from exc

    def _connection(self) -> sqlite3.Connection:
        return self._connections.get()

    def _run(self, sql: str, args: tuple) -> list[tuple]:
        try:
            return self._connection().execute(sql, args).fetchall()
        except sqlite3.Error as exc:
            raise StoreUnavailable(f"step files in {self.path}: {exc}") from exc

    def put(self, owner: str, name: str, data: bytes) -> None:
        now = time.time()
        self._run("DELETE FROM step_files WHERE created_at < ?", (now - self.ttl,))
        self._run("INSERT OR REPLACE INTO step_files VALUES (?, ?, ?, ?)",
                  (owner, name, self.seal(data), now))

    def get(self, owner: str, name: str) -> bytes | None:
        self._run("DELETE FROM step_files WHERE created_at < ?", (time.time() - self.ttl,))
        rows = self._run("SELECT data FROM step_files WHERE owner = ? AND name = ?",
                         (owner, name))
        return self.open(rows[0][0] if rows else None)

    def touch(self, owner: str) -> None:
        self._run("UPDATE step_files SET created_at = ? WHERE owner = ?", (time.time(), owner))

    def drop(self, owner: str, names: tuple[str, ...] | None = None) -> None:
        if names is None:
            self._run("DELETE FROM step_files WHERE owner = ?", (owner,))
        for name in names or ():
            self._run("DELETE FROM step_files WHERE owner = ? AND name = ?", (owner, name))


class RedisStepFiles(_Sealed):
    """Files as Redis keys next to the sessions, encrypted, expiring with the session TTL."""

    def __init__(self, client: Redis, prefix: str, ttl: float, key: bytes) -> None:
        super().__init__(key)
        self.client = client
        self.prefix = prefix
        self.ttl = ttl

    def _key(self, owner: str) -> str:
        return f"{self.prefix}{owner}"

    def put(self, owner: str, name: str, data: bytes) -> None:
        key = self._key(owner)
        with self.client.pipeline() as pipe:
            pipe.hset(key, name, self.seal(data))
            pipe.expire(key, max(1, int(self.ttl)))
            pipe.execute()

    def get(self, owner: str, name: str) -> bytes | None:
        return self.open(self.client.hget(self._key(owner), name))

    def touch(self, owner: str) -> None:
        self.client.expire(self._key(owner), max(1, int(self.ttl)))

    def drop(self, owner: str, names: tuple[str, ...] | None = None) -> None:
        if names is None:
            self.client.delete(self._key(owner))
        elif names:
            self.client.hdel(self._key(owner), *names)


def create_step_files(session_store: object, key: bytes | None = None) -> StepFiles:
    """The step-file store sharing ``session_store``'s backend (by its ``name``).

    Without ``key``, files that leave the process are encrypted with a random key
    of this process: safe, but other processes cannot read them (logged).
    """
    name = getattr(session_store, "name", None)
    ttl = float(getattr(session_store, "ttl", 1800))
    if name == "memory":
        return MemoryStepFiles(ttl)
    if key is None:
        log.warning("step files in the %s session store are encrypted with a key of this "
                    "process only: other workers cannot read them (si_agent.app.build_controller "
                    "derives a shared one from SI_UPLOAD_KEY or SI_JWT_SECRET)", name)
        key = Fernet.generate_key()
    if name == "sqlite":
        return SQLiteStepFiles(session_store.path, ttl, key)  # type: ignore[attr-defined]
    if name == "redis":
        prefix = session_store.prefix.removesuffix("session:") + "files:"  # type: ignore[attr-defined]
        return RedisStepFiles(session_store.client, prefix, ttl, key)  # type: ignore[attr-defined]
    raise UnknownBackendError("step files for session store", str(name),
                              ("memory", "sqlite", "redis"))
