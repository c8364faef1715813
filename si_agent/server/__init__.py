"""The HTTP API and web page: ``create_app(settings=None)``.

Blueprints, one per file: ``auth`` (tokens), ``chat`` (turns and the session),
``handoff`` (a hand-off ticket's live events for the citizen's page),
``upload`` (photos), ``voice`` (spoken messages), ``feedback`` (ratings of replies), ``businesses``, ``health``, ``openapi``, ``ui`` (the page), ``admin`` (the audit
log, admin role only), ``console`` (the staff console, a package), and the embedded demo
backend under ``/demo``. The controller (catalog, store, engine, executor) is
built once per app and shared by its threads.
"""

from __future__ import annotations

import logging

from flask import Flask
from werkzeug.middleware.proxy_fix import ProxyFix

from si_agent.config.dev_secret import with_dev_secret
from si_agent.config.settings import Settings
from si_agent.errors import JobInProgress, SessionConflict, StoreUnavailable
from si_agent.flow.controller import Controller
from si_agent.server import (
    admin,
    businesses,
    chat,
    feedback,
    handoff,
    health,
    openapi,
    ui,
    upload,
    voice,
)
from si_agent.server.auth import init_auth
from si_agent.server.console import init_console
from si_agent.server.cors import init_cors
from si_agent.server.errors import error_response, register_error_handlers
from si_agent.server.identity import rate_key
from si_agent.server.ratelimit import RateLimiter
from si_agent.server.streams import Streams
from si_agent.session.denylist import create_denylist
from si_agent.uploads import DecodeSlots, UploadVault
from si_agent.voice import create_recognizer

log = logging.getLogger(__name__)

__all__ = ["create_app"]


def create_app(settings: Settings | None = None, *, controller: Controller | None = None) -> Flask:
    """A configured Flask app; raises ``ConfigErrors``/``InsecureSettings`` on bad setup."""
    from si_agent.app import build_controller
    from si_agent.demo_backend import demo_blueprint

    settings = with_dev_secret(settings or Settings.from_env())
    app = Flask(__name__, static_folder=None)
    app.config.update(
        SI_SETTINGS=settings,
        SI_CONTROLLER=controller or build_controller(settings),
        MAX_CONTENT_LENGTH=settings.max_body_bytes,
        JSON_AS_ASCII=False,
        SI_UPLOAD_VAULT=UploadVault(settings.uploads_dir, settings.upload_retention_days,
                                    settings.upload_key),
        SI_DECODE_SLOTS=DecodeSlots(settings.upload_decodes),
        SI_STREAMS=Streams(settings.max_streams),
        SI_RECOGNIZER=create_recognizer(settings),
    )
    app.json.ensure_ascii = False
    init_auth(app, settings, create_denylist(app.config["SI_CONTROLLER"].store))
    init_cors(app, settings)
    if settings.proxy_hops:  # the client's address and scheme, as the proxies saw them
        app.wsgi_app = ProxyFix(app.wsgi_app, x_for=settings.proxy_hops,
                                x_proto=settings.proxy_hops)
    register_error_handlers(app)

    # Per user; if the storage (Redis) is down, counted in memory rather than fail turns.
    RateLimiter(settings.rate_limit, settings.rate_limit_storage, rate_key).init_app(
        app, chat.bp, upload.bp, voice.bp, feedback.bp)
    for bp in (chat.bp, handoff.bp, upload.bp, voice.bp, feedback.bp, businesses.bp, health.bp,
               openapi.bp, ui.bp, admin.bp):
        app.register_blueprint(bp)
    init_console(app, settings)
    if settings.auth_mode == "dev":
        # The demo backend's admin routes expose every application: never in prod.
        app.register_blueprint(demo_blueprint(settings.demo_backend_db), url_prefix="/demo")

    @app.errorhandler(StoreUnavailable)
    def _store_down(err: StoreUnavailable):
        log.error("session store unavailable: %s", err)
        return error_response(503, "store_unavailable")

    @app.errorhandler(SessionConflict)
    def _conflict(err: SessionConflict):
        log.warning("%s", err)  # carries the session's reference, not the user id
        return error_response(409)

    @app.errorhandler(JobInProgress)
    def _job_running(err: JobInProgress):
        log.info("%s", err)
        return error_response(409, "job_in_progress")

    return app

