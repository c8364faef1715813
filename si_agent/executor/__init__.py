"""Executors: carry out a business once its fields are collected and confirmed.

    executors = Executors(settings)        # one per process; thread-safe
    result = executors.run(business, values, idempotency_key="...")

``Executors`` picks the executor by ``business.api.kind`` from ``KINDS``:

    http      HttpExecutor      the business's HTTP backend; ``http://demo.si-agent``
                                is the in-process demo backend (``demo_host``)
    builtin   BuiltinExecutor   an in-process handler from ``builtin.HANDLERS``

Failures raise ``ExecutorError`` (message and field errors in Chinese, for the
citizen; ``retryable`` says whether resubmitting the same data may succeed);
an unknown kind or handler raises ``UnknownBackendError``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import httpx

from si_agent.config.model import Business
from si_agent.config.settings import Settings
from si_agent.errors import UnknownBackendError
from si_agent.executor.base import Executor
from si_agent.executor.builtin import HANDLERS, BuiltinExecutor
from si_agent.executor.demo_host import DEMO_ORIGIN
from si_agent.executor.http import HttpExecutor

__all__ = [
    "DEMO_ORIGIN",
    "HANDLERS",
    "BuiltinExecutor",
    "Executor",
    "Executors",
    "HttpExecutor",
]


class Executors:
    """Runs any business with the executor its ``api.kind`` names."""

    def __init__(
        self, settings: Settings, *, transport: httpx.BaseTransport | None = None
    ) -> None:
        self._http = HttpExecutor(settings.demo_backend_db, transport=transport)
        self.kinds: dict[str, Executor] = {"http": self._http, "builtin": BuiltinExecutor()}

    def run(
        self, business: Business, values: Mapping[str, Any], idempotency_key: str | None = None
    ) -> dict:
        """Execute ``business`` with ``values``; raises ``ExecutorError`` on failure."""
        kind = business.api.kind
        executor = self.kinds.get(kind)
        if executor is None:
            raise UnknownBackendError("api kind", kind, self.kinds)
        return executor.run(business, values, idempotency_key=idempotency_key)

    def close(self) -> None:
        """Close the HTTP connection pool."""
        self._http.close()

    def __enter__(self) -> Executors:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
