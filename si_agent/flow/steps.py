"""Step handlers: the work behind each step of a business (ID-card OCR, face match...).

A business YAML names a handler per step; handlers are found by name in a
registry (``register_step_handler`` plus the ``si_agent.step_handlers`` entry
points). A handler reads the upload, may look at what the session already
holds (``StepContext``: collected values, earlier steps' data and kept files),
and returns a ``StepResult``: ``fields`` it read (validated like typed values
and checked against values the citizen typed), JSON ``data`` kept for the
executor and later steps, binary ``files`` kept for later steps (the ID card's
portrait for the face step) or sent with the submission (``submit``), or an
``error`` in Chinese for the citizen, possibly with an earlier step to ``redo``.

Files live in ``si_agent.session.files`` (encrypted outside the process,
dropped with the flow), never in the session record or a log.

A business whose step handler is not registered on this deployment is marked
not available online when the controller is built (logged once), so a citizen
is told so before starting instead of failing mid-dialogue.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import Any, Protocol

from pydantic import BaseModel, Field, JsonValue

from si_agent.config.model import Business, Step

log = logging.getLogger(__name__)
ENTRY_POINT_GROUP = "si_agent.step_handlers"
# In a job's values, {FILE_REF: "<step>/<name>", "owner": ...} stands for a kept file.
FILE_REF = "$file"


class Upload(BaseModel):
    """What the citizen uploaded for a step: a reference (path) and optionally the bytes."""

    ref: str
    data: bytes | None = Field(default=None, repr=False)
    media_type: str | None = None


@dataclass(frozen=True)
class StepContext:
    """Read-only view of the session for a step handler."""

    business: Business
    values: Mapping[str, Any]  # collected field values
    step_data: Mapping[str, Mapping[str, Any]]  # earlier steps' data, by step id
    # An earlier step's kept file: file(step_id, name) -> bytes, or None when gone.
    file: Callable[[str, str], bytes | None] = lambda step_id, name: None


class StepResult(BaseModel):
    """What a step handler found (see the module docstring)."""

    fields: dict[str, Any] = Field(default_factory=dict)
    data: dict[str, JsonValue] = Field(default_factory=dict)  # never raw image bytes
    files: dict[str, bytes] = Field(default_factory=dict, repr=False)
    # Names of ``files`` sent with the submission: base64 in the payload, under
    # the step id (``{"<step id>": {"<name>": "<base64>"}}``).
    submit: tuple[str, ...] = ()
    error: str | None = None
    redo: str | None = None  # with an error: the earlier step to do again first

    @property
    def ok(self) -> bool:
        return self.error is None


class StepHandler(Protocol):
    def run(self, step: Step, upload: Upload, context: StepContext) -> StepResult: ...


_HANDLERS: dict[str, StepHandler] = {}


def register_step_handler(name: str, handler: StepHandler) -> None:
    """Make ``handler`` available to steps whose YAML says ``handler: name``."""
    _HANDLERS[name] = handler


def registered_step_handlers() -> dict[str, StepHandler]:
    """Handlers registered in code, plus those of installed entry points."""
    found: dict[str, StepHandler] = {}
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        try:
            obj = ep.load()
        except Exception as exc:  # a broken plug-in must not take the others down
            log.error("step handler entry point %r cannot be loaded: %s", ep.name, exc)
            continue
        found[ep.name] = obj() if isinstance(obj, type) else obj
    found.update(_HANDLERS)
    return found


def unavailable_businesses(
    catalog: Mapping[str, Business], handlers: Mapping[str, StepHandler]
) -> dict[str, list[str]]:
    """Businesses whose required steps name handlers that are not registered: id →
    missing names. (An optional step without its handler is left out instead:
    ``without_unavailable_steps``.)"""
    missing = {
        b.id: sorted({s.handler for s in b.steps
                      if s.handler not in handlers and not s.optional})
        for b in catalog.values()
    }
    return {bid: names for bid, names in missing.items() if names}


def without_unavailable_steps(
    catalog: Mapping[str, Business], handlers: Mapping[str, StepHandler]
) -> dict[str, Business]:
    """The catalog with the optional steps whose handler is not registered left out."""
    out = {}
    for bid, b in catalog.items():
        kept = tuple(s for s in b.steps if not s.optional or s.handler in handlers)
        if len(kept) < len(b.steps):
            log.warning("business %s: optional step(s) %s not offered: handler not registered",
                        bid, ", ".join(s.id for s in b.steps if s not in kept))
            b = b.model_copy(update={"steps": kept})
        out[bid] = b
    return out
