"""``RedisTurnStore``: the turn-event record in Redis, shared by every machine.

One list per conversation (``<prefix>turns:c:<id>``, each record's JSON, oldest first)
and one sorted set (``<prefix>turns:recent``) of conversation ids scored by their last
record's time. ``append`` is one round trip (``RPUSH``, ``EXPIRE`` to the retention
period, ``ZADD``); ``purge`` drops the conversations last active before the cutoff and
trims older records off the others.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from si_agent.errors import StoreUnavailable
from si_agent.turns.model import TurnRecord
from si_agent.turns.store import dump, load


def turns_prefix(session_prefix: str) -> str:
    """The keys of the deployment whose sessions live under ``session_prefix``."""
    return session_prefix.removesuffix("session:") + "turns:"


class RedisTurnStore:
    name = "redis"

    def __init__(self, client: Any, prefix: str = "si_agent:turns:", *,
                 retention: timedelta = timedelta(days=90)) -> None:
        import redis  # the caller built ``client`` with it

        self._client = client
        self.prefix = prefix
        self.retention = retention
        self._errors = (redis.RedisError, OSError)

    def __repr__(self) -> str:
        return f"RedisTurnStore(prefix={self.prefix!r})"

    @property
    def _index(self) -> str:
        return self.prefix + "recent"

    def _list(self, conversation: str) -> str:
        return f"{self.prefix}c:{conversation}"

    def append(self, record: TurnRecord) -> None:
        key = self._list(record.conversation)
        try:
            # One round trip; no MULTI/EXEC: each command stands alone, and a record
            # whose EXPIRE or ZADD was lost still expires or is listed with the next one.
            pipe = self._client.pipeline(transaction=False)
            pipe.rpush(key, dump(record))
            pipe.expire(key, int(self.retention.total_seconds()))
            pipe.zadd(self._index, {record.conversation: record.at.timestamp()})
            pipe.execute()
        except self._errors as exc:
            raise StoreUnavailable(f"Redis turn store: {type(exc).__name__}: {exc}") from exc

    def conversation(self, conversation: str) -> list[TurnRecord]:
        try:
            rows = self._client.lrange(self._list(conversation), 0, -1)
        except self._errors as exc:
            raise StoreUnavailable(f"Redis turn store: {type(exc).__name__}: {exc}") from exc
        return [load(data, f"{conversation}:{n}") for n, data in enumerate(rows)]

    def conversations(self, ids: Sequence[str]) -> dict[str, list[TurnRecord]]:
        try:
            pipe = self._client.pipeline(transaction=False)
            for conversation in ids:
                pipe.lrange(self._list(conversation), 0, -1)
            lists = pipe.execute()
        except self._errors as exc:
            raise StoreUnavailable(f"Redis turn store: {type(exc).__name__}: {exc}") from exc
        return {c: [load(data, f"{c}:{n}") for n, data in enumerate(rows)]
                for c, rows in zip(ids, lists, strict=True)}

    def recent(self, since: datetime | None = None, limit: int = 100) -> list[str]:
        low = since.timestamp() if since is not None else "-inf"
        try:
            ids = self._client.zrevrangebyscore(self._index, "+inf", low, start=0, num=limit)
        except self._errors as exc:
            raise StoreUnavailable(f"Redis turn store: {type(exc).__name__}: {exc}") from exc
        return [i.decode() if isinstance(i, bytes) else i for i in ids]

    def purge(self, before: datetime) -> None:
        cutoff = before.timestamp()
        try:
            gone = self._client.zrangebyscore(self._index, "-inf", f"({cutoff}")
            pipe = self._client.pipeline(transaction=False)
            for conversation in gone:
                name = conversation.decode() if isinstance(conversation, bytes) else conversation
                pipe.delete(self._list(name))
            pipe.zremrangebyscore(self._index, "-inf", f"({cutoff}")
            pipe.execute()
        except self._errors as exc:
            raise StoreUnavailable(f"Redis turn store: {type(exc).__name__}: {exc}") from exc
        # A conversation still active keeps its older records until its list expires
        # (EXPIRE restarts with each record): one conversation outlives the period by
        # its own length at most.
