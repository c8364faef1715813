"""Intent engines by name."""

from __future__ import annotations

from collections.abc import Mapping

from si_agent.config.model import Business
from si_agent.engine.base import IntentEngine
from si_agent.engine.rules import RuleEngine
from si_agent.errors import UnknownBackendError

ENGINES = ("rules",)


def create_engine(name: str, catalog: Mapping[str, Business]) -> IntentEngine:
    """The engine called ``name``; unknown names raise, listing the valid ones."""
    if name == "rules":
        return RuleEngine(catalog)
    raise UnknownBackendError("engine", name, ENGINES)
