"""A demo government portal with web forms only (no API), for the RPA executor.

It stands in for a site the assistant can only reach through a browser: login,
drafts, two-page forms, server-side field errors, a redesigned form version and
injected faults. Start it with ``si-agent portal``; see ``docs/demo-portal.md``.
"""

from __future__ import annotations

from si_agent.demo_portal.app import create_portal_app

__all__ = ["create_portal_app"]
