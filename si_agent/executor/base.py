"""The ``Executor`` protocol every business executor implements."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from si_agent.config.model import Business


class Executor(Protocol):
    """Carries out a business whose fields are collected and confirmed."""

    def run(
        self, business: Business, values: Mapping[str, Any], idempotency_key: str | None = None
    ) -> dict:
        """Return the backend's result dict, or raise ``ExecutorError``."""
        ...
