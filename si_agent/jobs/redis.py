"""``RedisJobStore``: jobs as hashes next to the sessions, saved by one Lua script."""

from __future__ import annotations

from typing import Any

from si_agent.errors import JobConflict, StoreUnavailable
from si_agent.jobs.model import Job
from si_agent.jobs.store import JOB_TTL, applied, prepare

# KEYS[1] = key; ARGV = expected version, new version, data, ttl in ms.
_SAVE = """
local found = tonumber(redis.call('HGET', KEYS[1], 'version')) or 0
if found ~= tonumber(ARGV[1]) then
  return {0, found}
end
redis.call('HSET', KEYS[1], 'version', ARGV[2], 'data', ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return {1, tonumber(ARGV[2])}
"""


def job_prefix(session_prefix: str) -> str:
    """Where the jobs of sessions under ``session_prefix`` live: ``…:job:``."""
    return session_prefix.removesuffix("session:") + "job:"


class RedisJobStore:
    name = "redis"

    def __init__(self, client: Any, prefix: str = "si_agent:job:") -> None:
        import redis  # the session store that shares its client imported it already

        self._client = client
        self.prefix = prefix
        self._errors = (redis.RedisError, OSError)
        self._save = client.register_script(_SAVE)

    def load(self, job_id: str) -> Job | None:
        try:
            version, data = self._client.hmget(self.prefix + job_id, ["version", "data"])
        except self._errors as exc:
            raise StoreUnavailable(f"Redis job store: {type(exc).__name__}: {exc}") from exc
        if data is None:
            return None
        job = Job.model_validate_json(data)
        job.version = int(version)
        return job

    def save(self, job: Job) -> None:
        expected, stored, data = prepare(job)
        try:
            written, found = self._save(keys=[self.prefix + job.id],
                                        args=[expected, stored.version, data, JOB_TTL * 1000],
                                        client=self._client)
        except self._errors as exc:
            raise StoreUnavailable(f"Redis job store: {type(exc).__name__}: {exc}") from exc
        if not written:
            raise JobConflict(job.id, expected, int(found))
        applied(job, stored)
