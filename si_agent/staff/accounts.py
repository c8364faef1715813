"""``Accounts``: local staff accounts for the console, with Argon2id password hashes.

A name is 1-64 letters (Chinese too), digits or ``_ . @ -``; a password has at
least ``MIN_PASSWORD`` characters. ``verify`` takes as long for an unknown name as
for a wrong password (it checks against a dummy hash), and rehashes a password
whose hash was made with older parameters. Changes raise ``AccountError``.
"""

from __future__ import annotations

import re
import sqlite3
import time
from dataclasses import dataclass

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

from si_agent.errors import AccountError
from si_agent.staff.store import StaffStore

STAFF, ADMIN = "staff", "admin"
ROLES = (STAFF, ADMIN)  # what a console user may be: admin can do everything staff can
MIN_PASSWORD = 10
MAX_PASSWORD = 1024  # hashing a megabyte is a denial of service, not a password
NAME = re.compile(r"[\w.@\-]{1,64}")


@dataclass(frozen=True)
class Account:
    """A local account as listed (never its hash)."""

    name: str
    role: str
    created: float
    last_login: float | None = None

    @property
    def roles(self) -> tuple[str, ...]:
        return (STAFF, ADMIN) if self.role == ADMIN else (STAFF,)


class Accounts:
    """The local accounts kept in ``store``."""

    def __init__(self, store: StaffStore, hasher: PasswordHasher | None = None) -> None:
        self.store = store
        self.hasher = hasher or PasswordHasher()  # Argon2id, RFC 9106's low-memory profile
        self._dummy: str | None = None  # hashed on the first sign-in, not at start-up

    def add(self, name: str, password: str, role: str = STAFF) -> Account:
        """A new account; ``AccountError`` for a bad name, role or password, or a taken name."""
        check_name(name)
        if role not in ROLES:
            raise AccountError(
                "invalid_role", f"role must be one of {', '.join(ROLES)}, got {role!r}"
            )
        digest = self.hasher.hash(check_password(password))
        now = time.time()
        with self.store.connection() as conn:
            try:
                conn.execute(
                    "INSERT INTO accounts (name, role, hash, created) VALUES (?, ?, ?, ?)",
                    (name, role, digest, now),
                )
            except sqlite3.IntegrityError:  # the name is taken: not a store outage
                raise AccountError("exists", f"an account named {name!r} exists already") from None
        return Account(name, role, now)

    def set_password(self, name: str, password: str) -> None:
        """Replace ``name``'s password; ``AccountError`` if unknown or the password is weak."""
        digest = self.hasher.hash(check_password(password))
        with self.store.connection() as conn:
            changed = conn.execute(
                "UPDATE accounts SET hash = ? WHERE name = ?", (digest, name)
            ).rowcount
        if not changed:
            raise AccountError("unknown", f"no account named {name!r}")

    def remove(self, name: str) -> None:
        """Delete ``name``'s account; ``AccountError`` if there is none."""
        with self.store.connection() as conn:
            removed = conn.execute("DELETE FROM accounts WHERE name = ?", (name,)).rowcount
        if not removed:
            raise AccountError("unknown", f"no account named {name!r}")

    def get(self, name: str) -> Account | None:
        with self.store.connection() as conn:
            row = conn.execute(
                "SELECT name, role, created, last_login FROM accounts WHERE name = ?", (name,)
            ).fetchone()
        return Account(*row) if row else None

    def list(self) -> list[Account]:
        """Every account, by name."""
        with self.store.connection() as conn:
            rows = conn.execute(
                "SELECT name, role, created, last_login FROM accounts ORDER BY name"
            ).fetchall()
        return [Account(*row) for row in rows]

    def verify(self, name: str, password: str) -> Account | None:
        """The account if ``password`` is ``name``'s, else None (in about the same time)."""
        row = None
        if NAME.fullmatch(name or "") and len(password) <= MAX_PASSWORD:
            with self.store.connection() as conn:
                row = conn.execute("SELECT hash FROM accounts WHERE name = ?", (name,)).fetchone()
        try:
            self.hasher.verify(row[0] if row else self._dummy_hash(), password[:MAX_PASSWORD])
        except (VerificationError, InvalidHashError):
            return None
        if row is None:
            return None
        now = time.time()
        with self.store.connection() as conn:
            if self.hasher.check_needs_rehash(row[0]):
                conn.execute(
                    "UPDATE accounts SET hash = ? WHERE name = ?",
                    (self.hasher.hash(password), name),
                )
            conn.execute("UPDATE accounts SET last_login = ? WHERE name = ?", (now, name))
        return self.get(name)

    def _dummy_hash(self) -> str:
        """A hash no password matches, checked for an unknown name (made once, when needed)."""
        if self._dummy is None:
            self._dummy = self.hasher.hash("not a password of anyone")
        return self._dummy


def check_name(name: str) -> str:
    if not NAME.fullmatch(name or ""):
        raise AccountError(
            "invalid_name",
            f"an account name is 1-64 letters, digits or _ . @ - characters, got {name!r}",
        )
    return name


def check_password(password: str) -> str:
    if len(password) < MIN_PASSWORD or len(password) > MAX_PASSWORD:
        raise AccountError(
            "weak_password", f"a password needs {MIN_PASSWORD} to {MAX_PASSWORD} characters"
        )
    if password != password.strip():
        raise AccountError("weak_password", "a password may not start or end with a space")
    return password
