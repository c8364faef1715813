"""``RedisCuratedStore``: curated answers in the deployment's Redis, shared by every machine.

Keys under ``prefix`` (``si_agent:curated:`` next to ``si_agent:session:``): the hash
``records`` (id → JSON), the hash ``hits`` (id → count), the counter ``revision`` and a
list ``history:<id>`` per answer. A write is one MULTI/EXEC transaction (all or none).
Curated answers never expire.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from si_agent.curated.model import CuratedAnswer
from si_agent.errors import StoreUnavailable


class RedisCuratedStore:
    def __init__(self, client: Any, *, prefix: str = "si_agent:curated:") -> None:
        import redis

        self._client = client
        self.prefix = prefix
        self._errors = (redis.RedisError, OSError)

    def __repr__(self) -> str:
        return f"RedisCuratedStore(prefix={self.prefix!r})"

    @contextmanager
    def _redis(self) -> Iterator[Any]:
        try:
            yield self._client
        except self._errors as exc:
            raise StoreUnavailable(f"Redis curated answer store: {exc}") from exc

    def _key(self, name: str) -> str:
        return self.prefix + name

    def all(self) -> list[CuratedAnswer]:
        with self._redis() as r:
            pipe = r.pipeline(transaction=True)
            pipe.hgetall(self._key("records"))
            pipe.hgetall(self._key("hits"))
            records, hits = pipe.execute()
        return [_load(v, hits.get(k)) for k, v in records.items()]

    def get(self, answer_id: str) -> CuratedAnswer | None:
        with self._redis() as r:
            pipe = r.pipeline(transaction=True)
            pipe.hget(self._key("records"), answer_id)
            pipe.hget(self._key("hits"), answer_id)
            record, hits = pipe.execute()
        return _load(record, hits) if record is not None else None

    def write(self, answers: Sequence[CuratedAnswer],
              replaced: Sequence[CuratedAnswer] = ()) -> None:
        with self._redis() as r:
            pipe = r.pipeline(transaction=True)
            for old in replaced:
                pipe.lpush(self._key(f"history:{old.id}"), old.record())
            if answers:
                pipe.hset(self._key("records"), mapping={a.id: a.record() for a in answers})
            pipe.incr(self._key("revision"))
            pipe.execute()

    def delete(self, answer_id: str) -> bool:
        with self._redis() as r:
            pipe = r.pipeline(transaction=True)
            pipe.hdel(self._key("records"), answer_id)
            pipe.hdel(self._key("hits"), answer_id)
            pipe.delete(self._key(f"history:{answer_id}"))
            pipe.incr(self._key("revision"))
            found = pipe.execute()[0]
        return bool(found)

    def count_hit(self, answer_id: str) -> None:
        with self._redis() as r:
            # Only for an answer still there: a hit racing a delete leaves no stray count.
            if r.hexists(self._key("records"), answer_id):
                r.hincrby(self._key("hits"), answer_id, 1)

    def revision(self) -> int:
        with self._redis() as r:
            return int(r.get(self._key("revision")) or 0)

    def history(self, answer_id: str) -> list[CuratedAnswer]:
        with self._redis() as r:
            records = r.lrange(self._key(f"history:{answer_id}"), 0, -1)
        return [CuratedAnswer.model_validate_json(x) for x in records]


def _load(record: bytes | str, hits: bytes | str | None) -> CuratedAnswer:
    answer = CuratedAnswer.model_validate_json(record)
    answer.hits = int(hits or 0)
    return answer
