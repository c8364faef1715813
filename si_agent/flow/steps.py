"""Step handlers: the work behind each step of a step flow (ID-card OCR, face match...).

A business YAML names a handler per step; handlers are registered by name.
A step whose handler is not registered on this deployment is reported to the
citizen as not available online; it never fails silently.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from pydantic import BaseModel, Field

from si_agent.config.model import Step


class StepResult(BaseModel):
    ok: bool
    data: dict[str, Any] = Field(default_factory=dict)
    error: str | None = None


class StepHandler(Protocol):
    def run(self, step: Step, arguments: Mapping[str, Any]) -> StepResult: ...


_HANDLERS: dict[str, StepHandler] = {}


def register_step_handler(name: str, handler: StepHandler) -> None:
    """Make ``handler`` available to steps whose YAML says ``handler: name``."""
    _HANDLERS[name] = handler


def registered_step_handlers() -> dict[str, StepHandler]:
    return dict(_HANDLERS)
