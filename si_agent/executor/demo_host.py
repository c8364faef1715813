"""The built-in demo backend host ``http://demo.si-agent``, served in-process.

Business URLs on this host are answered by ``si_agent.demo_backend`` through
``httpx.WSGITransport``: a real HTTP exchange (methods, headers, status codes,
JSON bodies) without a web server, so a fresh machine works end to end. The
demo app for a database path is built on first use, once per process.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import httpx

from si_agent.demo_backend.endpoints import DEMO_HOST, DEMO_ORIGIN
from si_agent.executor import texts

logger = logging.getLogger(__name__)

__all__ = ["DEMO_HOST", "DEMO_ORIGIN", "demo_app", "demo_transport"]

_apps: dict[str, Callable[..., Iterable[bytes]]] = {}
_apps_lock = threading.Lock()


def demo_app(db_path: str | Path) -> Callable[..., Iterable[bytes]]:
    """The process-wide demo WSGI app for ``db_path``, created (and seeded) on first call."""
    key = str(Path(db_path).resolve())
    app = _apps.get(key)
    if app is None:
        with _apps_lock:
            app = _apps.get(key)
            if app is None:
                # Imported here: the demo backend is only needed when the demo host is used.
                from si_agent.demo_backend import create_demo_app, ensure_db

                ensure_db(key)
                app = _apps[key] = create_demo_app(key)
    return app


class _LazyDemoApp:
    """A WSGI app that builds the demo app on its first request.

    If the database cannot be opened (e.g. an unwritable data directory), it
    answers 503 like an unavailable server would, and tries again next time.
    """

    def __init__(self, db_path: str | Path) -> None:
        self.db_path = db_path
        self._app: Callable[..., Iterable[bytes]] | None = None  # once built

    def __call__(self, environ: dict[str, Any], start_response: Callable) -> Iterable[bytes]:
        app = self._app
        if app is None:
            try:
                app = self._app = demo_app(self.db_path)
            except Exception:
                logger.exception("cannot start the demo backend on %s", self.db_path)
                body = json.dumps({"error": {"message": texts.BUSY}},
                                  ensure_ascii=False).encode()
                start_response("503 Service Unavailable",
                               [("Content-Type", "application/json")])
                return [body]
        return app(environ, start_response)


def demo_transport(db_path: str | Path) -> httpx.WSGITransport:
    """An httpx transport that serves the demo backend over ``db_path`` in-process."""
    return httpx.WSGITransport(app=_LazyDemoApp(db_path), raise_app_exceptions=False)
