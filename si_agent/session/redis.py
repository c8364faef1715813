"""``RedisStore``: sessions in Redis, shared by every process and machine.

Each session is a hash at ``prefix + session_id`` with two fields, ``version``
and ``data`` (the session as JSON), expiring ``ttl`` seconds after the last
save. ``save`` is one Lua script (compare version, write, expire), so it is
atomic on the server. The ``redis`` package is imported only when a store is
built, so importing ``si_agent.session`` needs neither the package nor a server.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from si_agent.errors import JobConflict, SessionConflict, StoreUnavailable
from si_agent.jobs.model import Job
from si_agent.jobs.redis import job_prefix
from si_agent.jobs.store import JOB_TTL
from si_agent.jobs.store import applied as job_applied
from si_agent.jobs.store import prepare as prepare_job
from si_agent.session.base import (
    EXPIRY_MARK_TTL,
    check_ttl,
    expiry_mark,
    parse_record,
    prepare_save,
)
from si_agent.session.model import Session

if TYPE_CHECKING:
    from redis import Redis

logger = logging.getLogger(__name__)

# KEYS[1] = key; ARGV = expected version, new version, data, ttl in ms.
# Returns {1, version} when written, {0, found version} on conflict.
_SAVE_SCRIPT = """
local key = KEYS[1]
local kind = redis.call('TYPE', key).ok
local found = 0
if kind == 'hash' then
  -- an unreadable version counts as a missing record
  found = tonumber(redis.call('HGET', key, 'version')) or 0
end
if found ~= tonumber(ARGV[1]) then
  -- the very same write already applied: a retried call whose reply was lost
  if found == tonumber(ARGV[2]) and redis.call('HGET', key, 'data') == ARGV[3] then
    return {1, found}
  end
  return {0, found}
end
if kind ~= 'none' and kind ~= 'hash' then
  redis.call('DEL', key)
end
redis.call('HSET', key, 'version', ARGV[2], 'data', ARGV[3])
redis.call('PEXPIRE', key, ARGV[4])
return {1, tonumber(ARGV[2])}
"""

# The same for a session and a job at once: KEYS[1] = session key, KEYS[2] = job key;
# ARGV[1..4] as above for the session, ARGV[5..8] the job's expected and new version,
# data and ttl. Returns {1, version}, {0, found session version}, or {-1, found job
# version}; nothing is written unless both versions match.
_SAVE_WITH_JOB_SCRIPT = """
local kind = redis.call('TYPE', KEYS[1]).ok
local found = 0
if kind == 'hash' then
  found = tonumber(redis.call('HGET', KEYS[1], 'version')) or 0
end
if found ~= tonumber(ARGV[1]) then
  return {0, found}
end
local job = tonumber(redis.call('HGET', KEYS[2], 'version')) or 0
if job ~= tonumber(ARGV[5]) then
  return {-1, job}
end
if kind ~= 'none' and kind ~= 'hash' then
  redis.call('DEL', KEYS[1])
end
redis.call('HSET', KEYS[2], 'version', ARGV[6], 'data', ARGV[7])
redis.call('PEXPIRE', KEYS[2], ARGV[8])
redis.call('HSET', KEYS[1], 'version', ARGV[2], 'data', ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return {1, tonumber(ARGV[2])}
"""

# KEYS[1] = key; ARGV[1] = the unreadable data seen by load ('' if none).
# Deletes the record unless a concurrent save has replaced it since.
_DISCARD_SCRIPT = """
local kind = redis.call('TYPE', KEYS[1]).ok
if kind == 'none' then
  return 0
end
if kind == 'hash' and (redis.call('HGET', KEYS[1], 'data') or '') ~= ARGV[1] then
  return 0
end
return redis.call('DEL', KEYS[1])
"""


def _import_redis() -> Any:
    try:
        import redis
    except ImportError as exc:
        raise ImportError(
            "the redis session store needs the 'redis' package: pip install 'redis>=6.4,<7'"
        ) from exc
    return redis


def mask_url(url: str) -> str:
    """``url`` with any password replaced by ``***`` (for logs and error messages)."""
    parts = urlsplit(url)
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, _, hostport = netloc.rpartition("@")
        if ":" in userinfo:
            netloc = f"{userinfo.partition(':')[0]}:***@{hostport}"
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        if any(k.lower() == "password" for k, _ in pairs):
            query = urlencode([(k, "***" if k.lower() == "password" else v) for k, v in pairs])
    return urlunsplit(parts._replace(netloc=netloc, query=query))


def redis_reachable(url: str, timeout: float = 0.5) -> bool:
    """Whether the Redis server at ``url`` answers PING within ``timeout`` seconds.

    A malformed URL raises ``ValueError``; a missing ``redis`` package raises
    ``ImportError``.
    """
    redis = _import_redis()
    from redis.backoff import NoBackoff
    from redis.retry import Retry

    client = redis.Redis.from_url(
        url,
        socket_connect_timeout=timeout,
        socket_timeout=timeout,
        retry=Retry(NoBackoff(), 0),
    )
    try:
        return bool(client.ping())
    except (redis.RedisError, OSError):
        return False
    finally:
        client.close()


class RedisStore:
    """Sessions in Redis at ``url`` (or through an existing ``client``)."""

    name = "redis"

    def __init__(
        self,
        url: str,
        prefix: str = "si_agent:session:",
        ttl: float = 1800,
        client: Redis | None = None,
        *,
        timeout: float = 2.0,
        mark_key: bytes | None = None,
    ) -> None:
        redis = _import_redis()
        self.url = url
        self.prefix = prefix
        self.ttl = check_ttl(ttl)
        self._ttl_ms = max(1, int(self.ttl * 1000))
        self._errors: tuple[type[BaseException], ...] = (redis.RedisError, OSError)
        self._response_error: type[BaseException] = redis.ResponseError
        self._owns_client = client is None
        if client is None:
            from redis.backoff import ExponentialWithJitterBackoff
            from redis.retry import Retry

            # One quick retry (a pooled connection dropped by a Redis restart), then
            # fail fast: a citizen is waiting for the reply.
            client = redis.Redis.from_url(
                url,
                socket_connect_timeout=timeout,
                socket_timeout=timeout,
                retry=Retry(ExponentialWithJitterBackoff(base=0.05, cap=0.2), 1),
                health_check_interval=30,
            )
        self._client = client
        self._save_script = client.register_script(_SAVE_SCRIPT)
        self._save_with_job_script = client.register_script(_SAVE_WITH_JOB_SCRIPT)
        self.job_prefix = job_prefix(prefix)
        self.mark_prefix = prefix.removesuffix("session:") + "expired:"  # like jobs
        self._mark_key = mark_key  # keys the expiry marks (base.expiry_mark)
        self._discard_script = client.register_script(_DISCARD_SCRIPT)

    @property
    def client(self) -> Redis:
        """The Redis client (shared with the job store next to the sessions)."""
        return self._client

    def __repr__(self) -> str:
        return f"RedisStore({mask_url(self.url)!r}, prefix={self.prefix!r}, ttl={self.ttl})"

    def load(self, session_id: str) -> Session | None:
        key = self.prefix + session_id
        try:
            version, data = self._client.hmget(key, ["version", "data"])
        except self._response_error as exc:
            if "WRONGTYPE" not in str(exc):
                raise self._unavailable("load", exc) from exc
            version = data = None  # not a hash: unreadable
        except self._errors as exc:
            raise self._unavailable("load", exc) from exc
        else:
            if version is None and data is None:
                return None
        session = parse_record(data, version, session_id, self.name)
        if session is None:
            try:
                self._discard_script(keys=[key], args=[data or b""], client=self._client)
            except self._errors as exc:
                raise self._unavailable("load", exc) from exc
        return session

    def save(self, session: Session, job: Job | None = None) -> None:
        pending = prepare_save(session)
        key = self.prefix + pending.session_id
        args = [pending.expected, pending.version, pending.data, self._ttl_ms]
        prepared = prepare_job(job) if job is not None else None
        try:
            if prepared is None:
                written, found = self._save_script(keys=[key], args=args, client=self._client)
            else:
                expected, stored, data = prepared
                written, found = self._save_with_job_script(
                    keys=[key, self.job_prefix + stored.id],
                    args=[*args, expected, stored.version, data, JOB_TTL * 1000],
                    client=self._client)
        except self._errors as exc:
            raise self._unavailable("save", exc) from exc
        if written == -1 and prepared is not None:
            raise JobConflict(prepared[1].id, prepared[0], int(found))
        if not written:
            raise SessionConflict(pending.session_id, expected=pending.expected, found=int(found))
        pending.apply(session)
        if job is not None and prepared is not None:
            job_applied(job, prepared[1])
        if pending.expected == 0:  # a new session: one more command, once per session
            try:
                self._client.set(self.mark_prefix + expiry_mark(pending.session_id, self._mark_key), 1,
                                 ex=EXPIRY_MARK_TTL)
            except self._errors as exc:  # the session is saved; only the notice is lost
                logger.warning("redis session store: no expiry mark written: %s", exc)

    def delete(self, session_id: str) -> None:
        try:
            self._client.delete(self.prefix + session_id,
                                self.mark_prefix + expiry_mark(session_id, self._mark_key))
        except self._errors as exc:
            raise self._unavailable("delete", exc) from exc

    def expired(self, session_id: str) -> bool:
        try:
            return bool(self._client.delete(self.mark_prefix + expiry_mark(session_id, self._mark_key)))
        except self._errors as exc:
            raise self._unavailable("check the expiry of", exc) from exc

    def ping(self) -> bool:
        try:
            return bool(self._client.ping())
        except self._errors:
            return False

    def close(self) -> None:
        """Release the connection pool, unless the client was passed in."""
        if self._owns_client:
            self._client.close()

    def _unavailable(self, operation: str, exc: BaseException) -> StoreUnavailable:
        return StoreUnavailable(
            f"cannot {operation} session: Redis session store at {mask_url(self.url)} "
            f"is unavailable ({type(exc).__name__}: {exc}); check that Redis is running "
            f"and SI_REDIS_URL"
        )
