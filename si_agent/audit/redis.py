"""``RedisAuditStore``: the audit log as a Redis Stream, shared by every machine.

One stream (``si_agent:audit`` next to the sessions' keys). ``append`` is one
``XADD`` that also trims entries older than the retention period
(``MINID ~ <cutoff>``: approximate, so Redis trims whole nodes cheaply; ``purge``
trims exactly with ``XTRIM MINID``). An entry's stream id is its own time in
milliseconds (``<ms>-*``, Redis 7), so a time filter is an id range and the newest
entries come from ``XREVRANGE``; an entry older than the stream's newest (a clock
behind) takes the server's time instead.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from si_agent.audit.model import AuditEntry, utc_now
from si_agent.errors import StoreUnavailable

_BATCH = 500  # entries read per XREVRANGE while filtering by business


def audit_key(session_prefix: str) -> str:
    """The stream of the deployment whose sessions live under ``session_prefix``."""
    return session_prefix.removesuffix("session:") + "audit"


class RedisAuditStore:
    name = "redis"

    def __init__(self, client: Any, key: str = "si_agent:audit", *,
                 retention: timedelta | None = None) -> None:
        import redis  # the caller built ``client`` with it

        self._client = client
        self.key = key
        self.retention = retention
        self._errors = (redis.RedisError, OSError)
        self._response_error = redis.ResponseError

    def __repr__(self) -> str:
        return f"RedisAuditStore(key={self.key!r})"

    def append(self, entry: AuditEntry) -> None:
        fields = {"data": entry.model_dump_json(exclude={"id"})}
        trim: dict[str, Any] = {}
        if self.retention is not None:
            trim = {"minid": _stream_id(utc_now() - self.retention), "approximate": True}
        try:
            try:  # the entry's own millisecond, so time filters and trimming follow ``at``
                self._client.xadd(self.key, fields, id=_stream_id(entry.at) + "-*", **trim)
            except self._response_error:
                # An entry of a machine whose clock is behind the stream's newest (or a
                # Redis before 7.0): the server's time instead.
                self._client.xadd(self.key, fields, **trim)
        except self._errors as exc:
            raise StoreUnavailable(f"Redis audit store: {type(exc).__name__}: {exc}") from exc

    def query(self, business: str | None = None, since: datetime | None = None,
              limit: int = 100) -> list[AuditEntry]:
        low = _stream_id(since) if since is not None else "-"
        high, found = "+", []
        batch = _BATCH if business is not None else limit  # without a filter: exactly these
        try:
            while len(found) < limit:
                rows = self._client.xrevrange(self.key, max=high, min=low, count=batch)
                for stream_id, fields in rows:
                    entry = AuditEntry.model_validate_json(fields.get(b"data") or fields["data"])
                    if business is None or entry.business == business:
                        found.append(entry.model_copy(update={"id": _text(stream_id)}))
                        if len(found) == limit:
                            break
                if len(rows) < batch:
                    break
                high = "(" + _text(rows[-1][0])  # exclusive: continue below the last one
        except self._errors as exc:
            raise StoreUnavailable(f"Redis audit store: {type(exc).__name__}: {exc}") from exc
        return found

    def purge(self, before: datetime) -> None:
        try:
            self._client.xtrim(self.key, minid=_stream_id(before), approximate=False)
        except self._errors as exc:
            raise StoreUnavailable(f"Redis audit store: {type(exc).__name__}: {exc}") from exc


def _stream_id(when: datetime) -> str:
    return str(max(0, int(when.timestamp() * 1000)))


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value
