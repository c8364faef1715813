"""A demo social-insurance backend: twelve businesses over SQLite, with demo people.

It gives a fresh machine a working end-to-end path: the executor serves
``http://demo.si-agent`` in-process from this app, and the API server can mount
``demo_blueprint`` under ``/demo`` for real HTTP. See ``docs/demo-data.md``.
"""

from __future__ import annotations

from si_agent.demo_backend.app import create_demo_app, demo_blueprint
from si_agent.demo_backend.db import ensure_db, fail_next

__all__ = ["create_demo_app", "demo_blueprint", "ensure_db", "fail_next"]
