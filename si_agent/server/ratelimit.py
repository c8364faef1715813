"""Per-user rate limits on the chat and upload APIs, counted with the ``limits`` library.

``SI_RATE_LIMIT`` (e.g. ``60 per minute``) holds per user and per blueprint: the key
is the token's identity, else the client address (``identity.rate_key``); a request
whose token does not verify is not counted (its view answers 401 at once). Counts
live in ``SI_RATE_LIMIT_STORAGE``: ``memory://`` counts in each process,
``redis://…`` is shared by every worker and host. The sliding window counter weighs
the previous window's count, so a user cannot send twice the limit across a
window's edge (as a fixed window allows), in two counters per user instead of the
moving window's list of timestamps; one Redis round trip per request.

A request over the limit is answered 429 ``rate_limited`` with ``Retry-After``.
If the storage cannot be reached, counting goes on in this process's memory and
the storage is tried again ``RETRY_SECONDS`` later: a Redis outage never fails a
turn because of its rate limit.

One ``before_request`` hook per blueprint does the check; flask-limiter, used
before, spent four times as long on its per-request bookkeeping as on the check
itself (docs/performance.md).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from flask import Blueprint, Flask, request
from limits import RateLimitItem, parse
from limits.errors import StorageError
from limits.storage import MemoryStorage, storage_from_string
from limits.strategies import SlidingWindowCounterRateLimiter

from si_agent.server.errors import ApiError, error_response

log = logging.getLogger(__name__)

__all__ = ["RateLimited", "RateLimiter"]

RETRY_SECONDS = 5.0  # how long to count in memory after the storage failed
STORAGE_TIMEOUT = 1.0  # seconds; a citizen is waiting for the reply


class RateLimited(ApiError):
    """429 ``rate_limited``, with the seconds until the next request is allowed."""

    def __init__(self, retry_after: int) -> None:
        super().__init__(429, "rate_limited")
        self.retry_after = retry_after


class RateLimiter:
    """``rate`` per key and blueprint, counted in ``storage_uri`` (memory if it is down).

    A malformed ``rate`` raises ``ValueError`` here, so the app refuses to start.
    """

    def __init__(self, rate: str, storage_uri: str, key: Callable[[], str | None]) -> None:
        self.item: RateLimitItem = parse(rate)
        self.key = key
        self.storage_uri = storage_uri
        options = ({"socket_timeout": STORAGE_TIMEOUT, "socket_connect_timeout": STORAGE_TIMEOUT}
                   if storage_uri.startswith(("redis", "rediss", "valkey")) else {})
        storage = storage_from_string(storage_uri, wrap_exceptions=True, **options)
        self._shared = SlidingWindowCounterRateLimiter(storage)
        self._fallback = SlidingWindowCounterRateLimiter(MemoryStorage())
        self._down_until = 0.0  # monotonic time until which the storage is not tried

    def init_app(self, app: Flask, *blueprints: Blueprint) -> None:
        """Check every request to ``blueprints`` on ``app``."""
        for bp in blueprints:  # on the app, not the blueprint: blueprints outlive apps
            app.before_request_funcs.setdefault(bp.name, []).append(self._checker(bp.name))
        app.register_error_handler(RateLimited, _too_many)

    def hit(self, key: str, scope: str) -> None:
        """Count one request of ``key`` on ``scope``; raise ``RateLimited`` over the limit."""
        self._count("hit", key, scope)

    def check(self, key: str, scope: str) -> None:
        """Raise ``RateLimited`` if ``key`` is over the limit on ``scope``, counting
        nothing (a sign-in counts only its failures: ``hit`` after)."""
        self._count("test", key, scope)

    def _count(self, how: str, key: str, scope: str) -> None:
        limiter = self._shared if time.monotonic() >= self._down_until else self._fallback
        try:
            allowed = getattr(limiter, how)(self.item, key, scope)
        except StorageError as exc:
            self._storage_failed(exc)
            limiter = self._fallback
            allowed = getattr(limiter, how)(self.item, key, scope)
        else:
            if limiter is self._shared and self._down_until:
                self._down_until = 0.0
                log.info("rate-limit storage reachable again: counting there")
        if not allowed:
            raise RateLimited(self._retry_after(limiter, key, scope))

    def _checker(self, scope: str) -> Callable[[], None]:
        def check() -> None:
            if request.method == "OPTIONS":  # preflights carry no token
                return
            key = self.key()
            if key is not None:  # None: not counted (identity.rate_key)
                self.hit(key, scope)

        return check

    def _retry_after(self, limiter: SlidingWindowCounterRateLimiter, key: str,
                     scope: str) -> int:
        try:
            reset = limiter.get_window_stats(self.item, key, scope).reset_time
        except StorageError:
            return self.item.get_expiry()
        return max(1, int(reset - time.time() + 0.999))

    def _storage_failed(self, exc: StorageError) -> None:
        if not self._down_until:
            log.warning("rate-limit storage %s unreachable (%s): counting in memory per "
                        "process, trying again every %.0f s", _scheme(self.storage_uri),
                        type(exc.storage_error).__name__, RETRY_SECONDS)
        self._down_until = time.monotonic() + RETRY_SECONDS


def _too_many(err: RateLimited):
    response = error_response(429, "rate_limited")
    response.headers["Retry-After"] = str(err.retry_after)
    return response


def _scheme(uri: str) -> str:
    """The storage's kind for logs (a URI may hold a password)."""
    return uri.partition("://")[0] + "://"
