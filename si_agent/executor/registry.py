"""Executors built from their kinds: what a kind declares (``capabilities``) and an
instance of it for the settings (``build_executor``).

The kinds themselves (built-ins, entry points, ``register_executor``) are looked up
by name in ``si_agent.config.kinds``, which business loading uses without
importing any executor (``si_agent.executor`` exports its public names).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from si_agent.config.settings import Settings
from si_agent.executor.base import Executor, ExecutorBase

__all__ = ["Capabilities", "build_executor", "capabilities"]


@dataclass(frozen=True)
class Capabilities:
    """What an executor declares it does (``Executor``'s flags, defaults filled in)."""

    long_running: bool
    resumable: bool
    takes_job: bool = ExecutorBase.takes_job
    discovers: bool = ExecutorBase.discovers


def capabilities(executor: Any) -> Capabilities:
    """The flags ``executor`` (class or instance, already checked) declares;
    ``takes_job`` and ``discovers`` are False where not declared."""
    return Capabilities(
        long_running=executor.long_running,
        resumable=executor.resumable,
        takes_job=getattr(executor, "takes_job", ExecutorBase.takes_job),
        discovers=getattr(executor, "discovers", ExecutorBase.discovers),
    )


def build_executor(cls: type, settings: Settings) -> Executor:
    """An instance of ``cls``: ``cls.from_settings(settings)`` if defined, else ``cls()``."""
    factory = getattr(cls, "from_settings", None)
    return factory(settings) if factory is not None else cls()
