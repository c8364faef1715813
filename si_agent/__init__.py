"""si_agent: social-insurance and government-service assistants that get things done.

The public API is what ``__all__`` lists; everything else may change.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

__version__ = "0.1.0"

__all__ = [
    "AssistantTexts",
    "Business",
    "Controller",
    "Settings",
    "SiAgentError",
    "TurnResult",
    "build_controller",
    "load_assistant_texts",
    "load_businesses",
    "__version__",
]

if TYPE_CHECKING:  # pragma: no cover
    from si_agent.app import build_controller
    from si_agent.config.assistant import AssistantTexts, load_assistant_texts
    from si_agent.config.loader import load_businesses
    from si_agent.config.model import Business
    from si_agent.config.settings import Settings
    from si_agent.errors import SiAgentError
    from si_agent.flow.controller import Controller
    from si_agent.flow.result import TurnResult

_LAZY = {
    "AssistantTexts": "si_agent.config.assistant",
    "Business": "si_agent.config.model",
    "Controller": "si_agent.flow.controller",
    "Settings": "si_agent.config.settings",
    "SiAgentError": "si_agent.errors",
    "TurnResult": "si_agent.flow.result",
    "build_controller": "si_agent.app",
    "load_assistant_texts": "si_agent.config.assistant",
    "load_businesses": "si_agent.config.loader",
}


def __getattr__(name: str):
    """Import public names on first use, so ``import si_agent`` stays light."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'si_agent' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
