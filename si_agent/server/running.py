"""How ``si-agent serve`` runs the app: gunicorn by default, Werkzeug's server with ``--dev``.

gunicorn runs in this process as the master, with the threaded worker
(``gthread``) as docs/deploy.md describes, and without ``--preload``: each
worker builds its own app (``create_app``) after the fork. Every app starts
preparing its knowledge base in the background (``prepared_app``), so the port
answers at once and ``/readyz`` reports the knowledge base as ``building``
until it is ready.

A worker that cannot build its app (an invalid business configuration, unsafe
settings) prints why, as ``si-agent`` does, and exits with gunicorn's boot-error
code, which stops the master: the server refuses to start, it does not retry.
"""

from __future__ import annotations

import gc
import logging
import sys
from collections.abc import Callable
from typing import Any

from flask import Flask

from si_agent.config.settings import Settings
from si_agent.errors import ConfigErrors, SiAgentError

log = logging.getLogger(__name__)

WORKER_BOOT_ERROR = 3  # gunicorn's arbiter halts on a worker exiting with this code


def _announce(host: str, port: int, tls: bool) -> None:
    url = f"{'https' if tls else 'http'}://{host}:{port}/"
    print(f"si_agent serving on {url} (Ctrl-C to stop); the knowledge base is prepared in "
          "the background: /readyz says 'building' until it is ready", file=sys.stderr,
          flush=True)


def prepared_app(settings: Settings) -> Flask:
    """The app, with its knowledge base being opened (or built) in the background."""
    from si_agent.server import create_app

    app = create_app(settings)
    prepare = getattr(app.config["SI_CONTROLLER"].knowledge, "prepare", None)
    if prepare is not None:  # a Knowledge without it opens on the first question
        prepare()
    return app


def serve_gunicorn(settings: Settings, *, host: str, port: int, workers: int, threads: int,
                   cert: str | None = None, key: str | None = None,
                   access_log: str | None = None) -> None:
    """Run gunicorn in this process until it is stopped (Ctrl-C, SIGTERM)."""
    if settings.max_streams > threads // 2:
        # Live event streams hold a thread each: at most half of them, so that /healthz
        # and turns always find one (si_agent.server.streams; 0: every page polls).
        log.warning("SI_MAX_STREAMS=%d with %d threads: %d live streams per worker",
                    settings.max_streams, threads, threads // 2)
        settings = settings.model_copy(update={"max_streams": threads // 2})
    run_gunicorn(lambda: _booted(settings), host=host, port=port, workers=workers,
                 threads=threads, cert=cert, key=key, access_log=access_log,
                 proc_name="si-agent", ready=lambda: _announce(host, port, bool(cert)))


def run_gunicorn(load: Callable[[], Callable], *, host: str, port: int, workers: int,
                 threads: int, proc_name: str, ready: Callable[[], object],
                 cert: str | None = None, key: str | None = None,
                 access_log: str | None = None) -> None:
    """gunicorn's threaded workers serving the WSGI app each worker ``load``s;
    ``ready()`` runs once, when the first worker has its app."""
    from gunicorn.app.base import BaseApplication

    options: dict[str, Any] = {
        "bind": f"[{host}]:{port}" if ":" in host else f"{host}:{port}",
        "workers": workers,
        "threads": threads,
        "worker_class": "gthread",
        "graceful_timeout": 30,
        "accesslog": access_log,
        "control_socket_disable": True,  # gunicorn 27's ~/.gunicorn socket: one per user
        "proc_name": proc_name,
        "post_worker_init": lambda worker: _worker_ready(worker, ready),
    }
    if cert:
        options.update(certfile=cert, keyfile=key)

    class Application(BaseApplication):
        def load_config(self) -> None:
            for name, value in options.items():
                if name in self.cfg.settings and value is not None:
                    self.cfg.set(name, value)

        def load(self) -> Callable:
            return load()

    Application().run()


def _worker_ready(worker: Any, ready: Callable[[], object]) -> None:
    """A worker has built its app: settle what it built; the first worker announces."""
    settle_start_up()
    if worker.age == 1:  # once, when the first worker has its app (it may refuse to start)
        ready()


def settle_start_up() -> None:
    """Exempt what the process built at start from the cyclic garbage collector.

    The app holds about 300,000 objects for good (the catalog, the validators' and the
    moderation's automata, compiled patterns, pydantic schemas); a full collection walks
    them all, about 90 ms of one thread here, once every ~2,000 turns in steady state:
    about 1% of a turn's CPU on average, but a pause that lands on one request's
    latency (docs/performance.md). ``gc.freeze`` moves them to a generation that is
    never collected; they are still freed by reference counting when released.
    """
    gc.collect()
    gc.freeze()


def _booted(settings: Settings) -> Flask:
    """``prepared_app`` in a worker; on a configuration error, say why and stop gunicorn."""
    try:
        return prepared_app(settings)
    except ConfigErrors as exc:
        print("error: the business configuration is invalid; refusing to start:", file=sys.stderr)
        for err in exc.errors:
            print(f"  {err}", file=sys.stderr)
    except SiAgentError as exc:
        print(f"error: {exc}", file=sys.stderr)
    sys.stderr.flush()
    raise SystemExit(WORKER_BOOT_ERROR)


def serve_dev(settings: Settings, *, host: str, port: int, cert: str | None = None,
              key: str | None = None) -> None:
    """Werkzeug's development server (one process, threads), for ``--dev``."""
    app = prepared_app(settings)
    settle_start_up()
    _announce(host, port, bool(cert))
    app.run(host=host, port=port, threaded=True, use_reloader=False,
            ssl_context=(cert, key) if cert else None)
