"""A demo social-insurance backend: twelve businesses over SQLite, with demo people.

It gives a fresh machine a working end-to-end path: the executor serves
``http://demo.si-agent`` in-process from this app, and the API server can mount
``demo_blueprint`` under ``/demo`` for real HTTP. What it implements is declared
in ``endpoints`` (plain data, read by ``si-agent validate``). See ``docs/demo-data.md``.

Importing this package imports neither Flask nor the services: the names below
are imported on first use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from si_agent.demo_backend.app import create_demo_app, demo_blueprint
    from si_agent.demo_backend.db import ensure_db, fail_next

__all__ = ["create_demo_app", "demo_blueprint", "ensure_db", "fail_next"]

_LAZY = {
    "create_demo_app": "si_agent.demo_backend.app",
    "demo_blueprint": "si_agent.demo_backend.app",
    "ensure_db": "si_agent.demo_backend.db",
    "fail_next": "si_agent.demo_backend.db",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
