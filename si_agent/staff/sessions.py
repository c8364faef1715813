"""``ConsoleSessions``: who is signed in to the staff console, until when.

A sign-in gets a random token (32 bytes, URL-safe) that goes into the console's
signed cookie; the store keeps only its SHA-256, the staff member's name, roles,
how they signed in (``local`` or ``token``) and the expiry. Signing out or
removing an account ends its sessions at once (a cookie copied elsewhere stops
working too). Expired rows are deleted as sessions are opened.
"""

from __future__ import annotations

import hashlib
import secrets
import time
from dataclasses import dataclass
from typing import Literal

from si_agent.staff.store import StaffStore

Source = Literal["local", "token"]


@dataclass(frozen=True)
class ConsoleSession:
    name: str
    roles: tuple[str, ...]
    source: Source
    expires: float


class ConsoleSessions:
    """Console sign-in sessions in ``store``."""

    def __init__(self, store: StaffStore) -> None:
        self.store = store

    def open(self, name: str, roles: tuple[str, ...], source: Source, expires: float) -> str:
        """A new session until ``expires`` (a Unix time); returns its token."""
        token = secrets.token_urlsafe(32)
        now = time.time()
        with self.store.connection() as conn:
            conn.execute("DELETE FROM console_sessions WHERE expires <= ?", (now,))
            conn.execute(
                "INSERT INTO console_sessions (digest, name, roles, source, created, "
                "expires) VALUES (?, ?, ?, ?, ?, ?)",
                (_digest(token), name, ",".join(roles), source, now, expires),
            )
        return token

    def get(self, token: str) -> ConsoleSession | None:
        """The session of ``token``, if it exists and has not expired."""
        with self.store.connection() as conn:
            row = conn.execute(
                "SELECT name, roles, source, expires FROM console_sessions "
                "WHERE digest = ? AND expires > ?",
                (_digest(token), time.time()),
            ).fetchone()
        if row is None:
            return None
        name, roles, source, expires = row
        return ConsoleSession(name, tuple(r for r in roles.split(",") if r), source, expires)

    def close(self, token: str) -> None:
        with self.store.connection() as conn:
            conn.execute("DELETE FROM console_sessions WHERE digest = ?", (_digest(token),))

    def close_all(self, name: str, source: Source = "local") -> int:
        """End every session of ``name`` signed in by ``source``; how many there were."""
        with self.store.connection() as conn:
            return conn.execute(
                "DELETE FROM console_sessions WHERE name = ? AND source = ?", (name, source)
            ).rowcount


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()
