"""The ``CuratedStore`` protocol, and choosing one like the session store.

Curated answers are shared by every process that answers citizens, so they live where
the sessions live (``create_curated_store``): with Redis sessions (a multi-machine
deployment) in the same Redis, under ``<prefix>curated:``; with SQLite sessions (one
machine) in ``$SI_DATA_DIR/curated.db``; with memory sessions (tests, ``si-agent
chat``) in memory. Every change bumps a revision number, which the matcher reads
before each question so an edit on one machine is seen on all of them at once.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

from si_agent.curated.model import CuratedAnswer

if TYPE_CHECKING:
    from si_agent.config.settings import Settings
    from si_agent.session.base import SessionStore


class CuratedStore(Protocol):
    """Where curated answers are kept; failures raise ``StoreUnavailable``."""

    def all(self) -> list[CuratedAnswer]:
        """Every curated answer, with its hit count, in no particular order."""
        ...

    def get(self, answer_id: str) -> CuratedAnswer | None: ...

    def write(self, answers: Sequence[CuratedAnswer],
              replaced: Sequence[CuratedAnswer] = ()) -> None:
        """Add or replace ``answers``, all or none; ``replaced`` (their versions before)
        are kept in their history."""
        ...

    def delete(self, answer_id: str) -> bool:
        """Remove an answer and its history; False when there was none."""
        ...

    def count_hit(self, answer_id: str) -> None:
        """One more citizen's question answered (does not change the revision)."""
        ...

    def revision(self) -> int:
        """A number that changes with every write and delete."""
        ...

    def history(self, answer_id: str) -> list[CuratedAnswer]:
        """The earlier versions of an answer, newest first."""
        ...


def create_curated_store(settings: Settings, sessions: SessionStore) -> CuratedStore:
    """The curated store of the session store's family (see the module docstring)."""
    from si_agent.session.memory import MemoryStore
    from si_agent.session.redis import RedisStore

    if isinstance(sessions, RedisStore):
        from si_agent.curated.redis import RedisCuratedStore

        return RedisCuratedStore(sessions.client,
                                 prefix=sessions.prefix.removesuffix("session:") + "curated:")
    if isinstance(sessions, MemoryStore):
        from si_agent.curated.memory import MemoryCuratedStore

        return MemoryCuratedStore()
    from si_agent.curated.sqlite import SQLiteCuratedStore

    return SQLiteCuratedStore(settings.curated_db)
