"""Session persistence: the ``SessionStore`` protocol, its backends and the registry.

Backends: ``memory`` (one process), ``sqlite`` (processes on one machine),
``redis`` (any number of machines); ``create_store(settings)`` picks one by
name, ``auto`` meaning Redis when reachable and SQLite otherwise.
"""

from si_agent.session.base import SessionStore
from si_agent.session.memory import MemoryStore
from si_agent.session.redis import RedisStore
from si_agent.session.registry import STORES, create_store
from si_agent.session.sqlite import SQLiteStore

__all__ = ["STORES", "MemoryStore", "RedisStore", "SQLiteStore", "SessionStore", "create_store"]
