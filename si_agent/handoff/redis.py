"""``RedisTicketStore``: tickets next to the sessions in Redis, for every process and machine.

Keys under the deployment's prefix (``si_agent:`` for sessions at ``si_agent:session:``):
``handoff:t:<number>`` a hash (``version``, ``data``), ``handoff:open`` a sorted set of
the open tickets by arrival, ``handoff:s:<session id>`` a session's open ticket,
``handoff:seq:<day>`` the day's counter and ``handoff:present`` a sorted set of the
staff at the queue by how long. A save is one Lua script: the compare-and-set and
both indexes change in one atomic step on the server.
"""

from __future__ import annotations

from typing import Any

from si_agent.errors import StoreUnavailable
from si_agent.handoff.model import Ticket
from si_agent.handoff.store import RETENTION, stored

# KEYS: ticket, open set, session index; ARGV: expected, version, data, open (1/0),
# created, number, retention in seconds. Returns 1 when written, 0 on a conflict.
_SAVE = """
local found = tonumber(redis.call('HGET', KEYS[1], 'version')) or 0
if found ~= tonumber(ARGV[1]) then
  return 0
end
redis.call('HSET', KEYS[1], 'version', ARGV[2], 'data', ARGV[3])
if ARGV[4] == '1' then
  redis.call('PERSIST', KEYS[1])
  redis.call('ZADD', KEYS[2], ARGV[5], ARGV[6])
  redis.call('SET', KEYS[3], ARGV[6])
else
  redis.call('EXPIRE', KEYS[1], ARGV[7])
  redis.call('ZREM', KEYS[2], ARGV[6])
  if redis.call('GET', KEYS[3]) == ARGV[6] then
    redis.call('DEL', KEYS[3])
  end
end
return 1
"""


def handoff_prefix(session_prefix: str) -> str:
    """Where the tickets of sessions under ``session_prefix`` live: ``…:handoff:``."""
    return session_prefix.removesuffix("session:") + "handoff:"


class RedisTicketStore:
    name = "redis"

    def __init__(self, client: Any, prefix: str = "si_agent:handoff:") -> None:
        import redis  # the session store that shares its client imported it already

        self._client = client
        self.prefix = prefix
        self._errors = (redis.RedisError, OSError)
        self._save = client.register_script(_SAVE)

    def __repr__(self) -> str:
        return f"RedisTicketStore(prefix={self.prefix!r})"

    def _call(self, what: str, fn, *args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except self._errors as exc:
            raise StoreUnavailable(f"cannot {what}: Redis hand-off ticket store is unavailable "
                                   f"({type(exc).__name__}: {exc})") from exc

    def load(self, number: str) -> Ticket | None:
        version, data = self._call("load a ticket", self._client.hmget,
                                   self.prefix + "t:" + number, ["version", "data"])
        if version is None or data is None:
            return None
        ticket = Ticket.model_validate_json(data)
        ticket.version = int(version)
        return ticket

    def save(self, ticket: Ticket) -> bool:
        expected, version, data = stored(ticket)
        keys = [self.prefix + "t:" + ticket.number, self.prefix + "open",
                self.prefix + "s:" + ticket.session_id]
        args = [expected, version, data, "1" if ticket.open else "0", ticket.created,
                ticket.number, RETENTION]
        written = self._call("save a ticket", self._save, keys=keys, args=args,
                             client=self._client)
        if written:
            ticket.version = version
        return bool(written)

    def open_numbers(self) -> list[str]:
        found = self._call("list the queue", self._client.zrange, self.prefix + "open", 0, -1)
        return [n.decode() if isinstance(n, bytes) else n for n in found]

    def open_for(self, session_id: str) -> str | None:
        found = self._call("find a ticket", self._client.get, self.prefix + "s:" + session_id)
        return found.decode() if isinstance(found, bytes) else found

    def next_seq(self, day: str) -> int:
        key = self.prefix + "seq:" + day
        pipe = self._client.pipeline()
        pipe.incr(key)
        pipe.expire(key, 3 * 24 * 3600)
        return int(self._call("number a ticket", pipe.execute)[0])

    def beat(self, name: str, until: float) -> None:
        self._call("record presence", self._client.zadd, self.prefix + "present", {name: until})

    def present(self, now: float) -> list[str]:
        key = self.prefix + "present"
        pipe = self._client.pipeline()
        pipe.zremrangebyscore(key, "-inf", now)
        pipe.zrangebyscore(key, now, "+inf")
        found = self._call("read presence", pipe.execute)[1]
        return sorted(n.decode() if isinstance(n, bytes) else n for n in found)

    def leave(self, name: str) -> None:
        self._call("record presence", self._client.zrem, self.prefix + "present", name)
