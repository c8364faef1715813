"""The builtin kind's handlers by name: ``HANDLERS`` (``api.options.handler``).

A handler takes the field values and returns the result dict; it raises
``ExecutorError`` (with ``field_errors``) for inputs it refuses. Register more
by adding to ``HANDLERS`` before businesses load.
"""

from __future__ import annotations

from collections.abc import Callable

from si_agent.pension import pension_estimate

Handler = Callable[[dict], dict]

HANDLERS: dict[str, Handler] = {
    "pension_estimate": pension_estimate,
}
