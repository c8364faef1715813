"""The staff console at ``/console``: server-rendered pages for the ``staff`` and ``admin`` roles.

    init_console(app, settings)      # called by create_app: the blueprint, CSRF, sign-in

``blueprint`` holds ``bp``, the navigation (``SECTIONS``) and the checks below;
``identity`` says who a request is. Then one module per screen: ``signin``
(sign-in and sign-out), ``overview`` (``/console/``), ``hits`` (hit testing: how
the knowledge channel reads a question and what it answers), ``conversations``
(the conversation review over the turn-event record, and the submissions the audit
log holds), ``analytics`` (funnels and other numbers over the turn-event record),
``moderation`` (the sensitive-word list: hits, editing, versions), ``businesses`` (the
business folder: validation, YAML, a preview chat, saving on one machine), ``documents`` (knowledge
documents: upload, preview, publish, replace, delete), ``handoff`` (the queue of
citizens who asked for a person); ``texts`` holds the
Chinese the views say, the templates the rest. A new screen (documents, curated
answers, conversations, analytics) is a module with its routes on ``bp``, its
templates, and a line in ``SECTIONS``.

Rules every route follows (``bp.before_request``):

- a state-changing request (POST) carries the CSRF token of the signed cookie
  session (Flask-WTF's ``CSRFProtect``; a form field or the ``X-CSRFToken``
  header), else 400;
- the caller is signed in: a console session (the cookie ``si_console``: HttpOnly,
  SameSite=Strict, Secure over HTTPS, path ``/console``), or a gateway's bearer
  token whose ``roles`` claim lists ``staff`` or ``admin``. A valid token without
  either role (a citizen's) is refused 403, no sign-in at all goes to the sign-in
  page (401 for a POST);
- every change is written to the audit log (``AuditLog.staff``: who, what, when).

Pages are served under the citizen page's strict policy (no inline script or style,
never in a frame) and never cached. Their ``Referrer-Policy`` is ``same-origin`` (the
citizen page's is ``no-referrer``): over HTTPS, Flask-WTF also checks that a POST's
``Referer`` is this site.
"""

from __future__ import annotations

import hashlib
import hmac
from datetime import timedelta

from flask import Flask, Request, request
from flask.sessions import SecureCookieSession, SecureCookieSessionInterface
from flask_wtf.csrf import CSRFProtect

from si_agent.config.settings import Settings
from si_agent.server.console.blueprint import SECTIONS, bp
from si_agent.server.ratelimit import RateLimiter
from si_agent.staff import Accounts, ConsoleSessions, StaffStore

__all__ = ["SECTIONS", "bp", "init_console"]

COOKIE = "si_console"
CONSOLE_PATH = "/console"


class ConsoleCookie(SecureCookieSessionInterface):
    """Flask's signed cookie session, marked Secure whenever the request came over HTTPS
    (behind a proxy: as ``SI_PROXY_HOPS`` trusts its X-Forwarded-Proto)."""

    def get_cookie_secure(self, app: Flask) -> bool:
        return request.is_secure or super().get_cookie_secure(app)

    def open_session(self, app: Flask, request: Request) -> SecureCookieSession | None:
        if not request.path.startswith(CONSOLE_PATH):
            # The citizen API and page use no session (and get no cookie): not even a
            # signing serializer is made for their requests.
            return self.make_null_session(app)
        return super().open_session(app, request)


def init_console(app: Flask, settings: Settings) -> None:
    """Register the console on ``app``: its blueprint, cookie, CSRF checks and stores."""
    from si_agent.server.console import (  # noqa: F401  (their routes on bp)
        analytics,
        businesses,
        conversations,
        curated,
        documents,
        handoff,
        hits,
        moderation,
        overview,
        signin,
    )

    store = StaffStore(settings.staff_db)
    app.config.update(
        SECRET_KEY=console_secret(settings),
        SESSION_COOKIE_NAME=COOKIE,
        SESSION_COOKIE_PATH=CONSOLE_PATH,
        SESSION_COOKIE_HTTPONLY=True,
        SESSION_COOKIE_SAMESITE="Strict",
        PERMANENT_SESSION_LIFETIME=timedelta(hours=settings.console_session_hours),
        WTF_CSRF_CHECK_DEFAULT=False,  # the console's before_request checks its own routes
        WTF_CSRF_TIME_LIMIT=None,  # valid as long as the signed-in session
        SI_STAFF_ACCOUNTS=Accounts(store),
        SI_CONSOLE_SESSIONS=ConsoleSessions(store),
        SI_CONSOLE_LOGIN_LIMIT=RateLimiter(
            settings.console_login_limit, settings.rate_limit_storage, lambda: None
        ),
    )
    app.session_interface = ConsoleCookie()
    app.extensions["si_csrf"] = CSRFProtect(app)
    app.register_blueprint(bp)
    moderation.init_moderation_editor(app, settings, app.config["SI_CONTROLLER"].moderation)


def console_secret(settings: Settings) -> bytes:
    """The key that signs the console cookie: derived from every secret the deployment
    has, so it is strong whenever one of them is (prod mode requires that)."""
    material = "\0".join(
        [
            settings.jwt_secret,
            settings.audit_pepper or "",
            settings.upload_key or "",
            *(s for _, s in settings.jwt_keys),
        ]
    )
    return hmac.new(
        material.encode("utf-8"), b"si-agent staff console cookie", hashlib.sha256
    ).digest()
