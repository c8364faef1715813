"""``HttpExecutor`` (``api.kind: http``): submits a business's values to its HTTP backend.

Options (``HttpOptions``): ``url`` (required), ``method`` (POST), ``timeout`` (10 s).

    URL          expand_env(url), at call time
    POST         values as a JSON body;  GET: values as query parameters
    header       Idempotency-Key: <key>  (the same key on the retry)
    retry        once, on transport errors (connect errors, timeouts, dropped connections)

    2xx + JSON object            -> the dict
    4xx + {"error": {...}}       -> ExecutorError(message, field_errors, retryable=False)
    408/425/429                  -> the same, but retryable=True
    5xx, non-JSON, not an object -> ExecutorError(retryable=True)
    transport failure twice      -> ExecutorError(texts.UNREACHABLE, retryable=True)

The kind is resumable: the backend must honour ``Idempotency-Key`` (a repeated
key returns the first result and applies nothing new; the demo backend does).
URLs on ``http://demo.si-agent`` go to the in-process demo backend (see
``demo_host``); every other URL is real HTTP. Values are never logged: they
hold ID numbers, so only the business id, status and elapsed time are.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Mapping
from datetime import date, datetime
from decimal import Decimal
from http.cookiejar import CookieJar, DefaultCookiePolicy
from pathlib import Path
from typing import Any, ClassVar

import httpx
from pydantic import BaseModel

from si_agent.config.envsubst import expand_env
from si_agent.config.model import Business
from si_agent.config.settings import Settings
from si_agent.errors import ExecutorError
from si_agent.executor import texts
from si_agent.executor.base import ExecutorBase, Progress
from si_agent.executor.demo_host import DEMO_ORIGIN, demo_transport
from si_agent.executor.options import HttpOptions

logger = logging.getLogger(__name__)

ATTEMPTS = 2  # the first try and one retry
RETRYABLE_CLIENT_STATUSES = frozenset({408, 425, 429})

__all__ = ["HttpExecutor", "HttpOptions"]


class HttpExecutor(ExecutorBase):
    """Runs ``kind: http`` businesses; one instance per process, safe across threads.

    ``demo_db`` is the SQLite file of the in-process demo backend (None: the demo
    host is not served). ``transport`` replaces the network transport (tests).
    """

    kind: ClassVar[str] = "http"
    Options: ClassVar[type[BaseModel]] = HttpOptions
    long_running: ClassVar[bool] = False
    resumable: ClassVar[bool] = True

    def __init__(
        self,
        demo_db: str | Path | None = None,
        *,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        mounts = {DEMO_ORIGIN: demo_transport(demo_db)} if demo_db is not None else None
        # One client serves every citizen: never keep cookies from one request to the next.
        no_cookies = CookieJar(policy=DefaultCookiePolicy(allowed_domains=[]))
        self._client = httpx.Client(
            transport=transport, mounts=mounts, cookies=no_cookies, follow_redirects=False
        )
        _redact_httpx_queries()

    @classmethod
    def from_settings(cls, settings: Settings) -> HttpExecutor:
        """The process's http executor, serving the demo host from ``settings``."""
        return cls(settings.demo_backend_db)

    def close(self) -> None:
        self._client.close()

    def run(
        self,
        business: Business,
        values: Mapping[str, Any],
        *,
        idempotency_key: str,
        options: HttpOptions,
        progress: Progress | None = None,
    ) -> dict:
        """Submit ``values``, answering within the turn (``progress`` is not used).

        The key travels in an HTTP header, so it must be non-empty printable
        ASCII (``ValueError`` otherwise).
        """
        key = idempotency_key
        if not (key and key.isascii() and key.isprintable()):
            raise ValueError("idempotency_key must be non-empty printable ASCII (an HTTP header)")
        try:
            request = self._build(values, key, options)
            response = self._send(business, request)
        except (httpx.InvalidURL, httpx.UnsupportedProtocol) as exc:
            logger.error("business %s: bad backend URL %r: %s", business.id, options.url, exc)
            raise ExecutorError(texts.MISCONFIGURED, retryable=False) from exc
        return _result(business, response)

    def _build(self, values: Mapping[str, Any], key: str, options: HttpOptions) -> httpx.Request:
        url = httpx.URL(expand_env(options.url))
        if url.scheme not in ("http", "https") or not url.host:
            raise httpx.InvalidURL(f"not an absolute http(s) URL: {url}")
        headers = {"Idempotency-Key": key, "Accept": "application/json"}
        if options.method == "GET":
            params = {k: _param(v) for k, v in values.items() if v is not None}
            return self._client.build_request(
                "GET", url, params=params, headers=headers, timeout=options.timeout
            )
        body = json.dumps(dict(values), ensure_ascii=False, default=_jsonable).encode()
        headers["Content-Type"] = "application/json; charset=utf-8"
        return self._client.build_request(
            "POST", url, content=body, headers=headers, timeout=options.timeout
        )

    def _send(self, business: Business, request: httpx.Request) -> httpx.Response:
        where = _loggable(request.url)
        for attempt in range(1, ATTEMPTS + 1):
            started = time.perf_counter()
            try:
                response = self._client.send(request)
            except httpx.UnsupportedProtocol:
                raise
            except httpx.TransportError as exc:
                logger.warning(
                    "business %s: %s %s failed after %d ms (attempt %d/%d): %s",
                    business.id, request.method, where, _ms(started), attempt, ATTEMPTS,
                    type(exc).__name__,
                )
                if attempt == ATTEMPTS:
                    raise ExecutorError(texts.UNREACHABLE, retryable=True) from exc
                continue
            logger.info(
                "business %s: %s %s -> %d in %d ms (attempt %d)",
                business.id, request.method, where, response.status_code, _ms(started), attempt,
            )
            return response
        raise AssertionError("unreachable")  # pragma: no cover


def _result(business: Business, response: httpx.Response) -> dict:
    status = response.status_code
    data = _json(response)
    if 200 <= status < 300:
        if isinstance(data, dict):
            return data
        raise ExecutorError(texts.BAD_RESPONSE, retryable=True, status=status)
    message, fields = _error_body(data)
    if 400 <= status < 500:
        raise ExecutorError(
            message or texts.REJECTED,
            field_errors=_known_fields(business, fields),
            retryable=status in RETRYABLE_CLIENT_STATUSES,
            status=status,
        )
    if status >= 500:
        raise ExecutorError(message or texts.BUSY, retryable=True, status=status)
    raise ExecutorError(texts.BAD_RESPONSE, retryable=False, status=status)


def _json(response: httpx.Response) -> Any:
    try:
        return response.json()
    except ValueError:  # includes json.JSONDecodeError and undecodable bytes
        return None


def _error_body(data: Any) -> tuple[str | None, dict[str, str]]:
    """``message`` and ``fields`` of an ``{"error": {...}}`` body, tolerating odd shapes."""
    error = data.get("error") if isinstance(data, dict) else None
    if not isinstance(error, dict):
        return None, {}
    message = error.get("message")
    message = message.strip() if isinstance(message, str) and message.strip() else None
    raw = error.get("fields")
    fields = {str(k): str(v) for k, v in raw.items() if v} if isinstance(raw, dict) else {}
    return message, fields


def _known_fields(business: Business, fields: dict[str, str]) -> dict[str, str]:
    """Only the field errors the dialogue can ask again for (fields and steps)."""
    known = set(business.field_keys) | {s.id for s in business.steps}
    unknown = sorted(set(fields) - known)
    if unknown:
        logger.warning("business %s: backend reported errors on unknown fields %s",
                       business.id, unknown)
    return {k: v for k, v in fields.items() if k in known}


def _jsonable(value: Any) -> Any:
    if isinstance(value, (date, datetime)):
        return value.isoformat()
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, (set, frozenset)):
        return sorted(value)
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    raise TypeError(f"value of type {type(value).__name__} is not JSON serialisable")


def _param(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    if isinstance(value, (dict, list, tuple)):
        return json.dumps(value, ensure_ascii=False, default=_jsonable)
    if isinstance(value, (int, float, Decimal)):
        return str(value)
    return str(_jsonable(value))


def _loggable(url: httpx.URL) -> str:
    """The URL without credentials or query string (which may hold values)."""
    port = f":{url.port}" if url.port else ""
    return f"{url.scheme}://{url.host}{port}{url.path}"


def _ms(started: float) -> int:
    return int((time.perf_counter() - started) * 1000)


class _RedactQuery(logging.Filter):
    """Drop query strings from httpx's request log lines: GET values hold ID numbers."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple):
            record.args = tuple(
                f"{_loggable(a)}?<redacted>" if isinstance(a, httpx.URL) and a.query else a
                for a in record.args
            )
        return True


_redact_lock = threading.Lock()
_redacting = False


def _redact_httpx_queries() -> None:
    global _redacting
    with _redact_lock:
        if not _redacting:
            logging.getLogger("httpx").addFilter(_RedactQuery())
            _redacting = True
