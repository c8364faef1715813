"""``BuiltinExecutor``: businesses computed in-process by a registered handler.

A handler takes the field values and returns the result dict; it raises
``ExecutorError`` (with ``field_errors``) for inputs it refuses. Register more
by adding to ``HANDLERS``; ``business.api.handler`` picks one by name.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from typing import Any

from si_agent.config.model import Business
from si_agent.errors import UnknownBackendError
from si_agent.executor.pension import pension_estimate

logger = logging.getLogger(__name__)

Handler = Callable[[dict], dict]

HANDLERS: dict[str, Handler] = {
    "pension_estimate": pension_estimate,
}


class BuiltinExecutor:
    """Runs ``business.api.handler`` from a handler registry (``HANDLERS`` by default)."""

    def __init__(self, handlers: Mapping[str, Handler] | None = None) -> None:
        self._handlers = HANDLERS if handlers is None else handlers

    def run(
        self, business: Business, values: Mapping[str, Any], idempotency_key: str | None = None
    ) -> dict:
        """Call the handler with a copy of ``values``; the key is unused (no side effects)."""
        name = business.api.handler or ""
        handler = self._handlers.get(name)
        if handler is None:
            raise UnknownBackendError("builtin handler", name, self._handlers)
        started = time.perf_counter()
        result = handler(dict(values))
        if not isinstance(result, dict):
            raise TypeError(f"builtin handler {name!r} returned {type(result).__name__}, not dict")
        logger.info(
            "business %s: builtin %s done in %d ms",
            business.id, name, (time.perf_counter() - started) * 1000,
        )
        return result
