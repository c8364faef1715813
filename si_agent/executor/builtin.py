"""``BuiltinExecutor`` (``api.kind: builtin``): businesses computed in-process by a handler.

Options (``BuiltinOptions``): ``handler``, a name in ``HANDLERS`` (``handlers``),
checked when businesses load. A handler takes the field values and returns the result
dict; it raises ``ExecutorError`` (with ``field_errors``) for inputs it
refuses. Register more by adding to ``HANDLERS`` before businesses load.
Handlers are pure: the kind answers within the turn and may always be re-run.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from typing import Any, ClassVar

from pydantic import BaseModel

from si_agent.config.model import Business
from si_agent.errors import UnknownBackendError
from si_agent.executor.base import ExecutorBase, Progress
from si_agent.executor.handlers import HANDLERS, Handler
from si_agent.executor.options import BuiltinOptions

logger = logging.getLogger(__name__)

__all__ = ["HANDLERS", "BuiltinExecutor", "BuiltinOptions", "Handler"]


class BuiltinExecutor(ExecutorBase):
    """Runs the handler its options name; stateless, so safe across threads."""

    kind: ClassVar[str] = "builtin"
    Options: ClassVar[type[BaseModel]] = BuiltinOptions
    long_running: ClassVar[bool] = False
    resumable: ClassVar[bool] = True

    def run(
        self,
        business: Business,
        values: Mapping[str, Any],
        *,
        idempotency_key: str,
        options: BuiltinOptions,
        progress: Progress | None = None,
    ) -> dict:
        """Call the handler with a copy of ``values``; the key is unused (no side effects)."""
        name = options.handler
        handler = HANDLERS.get(name)
        if handler is None:  # removed from HANDLERS after the options were validated
            raise UnknownBackendError("builtin handler", name, HANDLERS)
        started = time.perf_counter()
        result = handler(dict(values))
        if not isinstance(result, dict):
            raise TypeError(f"builtin handler {name!r} returned {type(result).__name__}, not dict")
        logger.info(
            "business %s: builtin %s done in %d ms",
            business.id, name, (time.perf_counter() - started) * 1000,
        )
        return result
