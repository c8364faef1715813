"""The ``rpa`` executor kind: government web forms filled with Playwright (see ``executor``).

The names below load on first use, so ``si_agent.executor.rpa.options`` (what
business loading needs) is importable without the executor, the browser agent
or Playwright.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["FieldStatus", "RpaExecutor", "RpaOptions"]

_HOMES = {"RpaExecutor": "executor", "RpaOptions": "options", "FieldStatus": "trace"}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{home}"), name)
