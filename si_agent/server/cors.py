"""CORS for the API: off unless ``SI_CORS_ORIGINS`` lists the browser origins allowed.

Off (the default), no response carries ``Access-Control-Allow-Origin``, so a page
from another origin cannot read the API's answers; the chat page served by the
app itself is same-origin and needs nothing. With an allow-list, flask-cors answers
the preflights of ``/api/*`` and marks the answers to those exact origins only.
Credentials (cookies) are never allowed: the API authenticates by bearer token.
"""

from __future__ import annotations

from flask import Flask

from si_agent.config.settings import Settings

ALLOWED_HEADERS = ["Authorization", "Content-Type", "Accept"]
EXPOSED_HEADERS = ["Retry-After"]
PREFLIGHT_MAX_AGE = 600  # seconds a browser may cache a preflight answer


def init_cors(app: Flask, settings: Settings) -> None:
    """Allow the configured origins on ``/api/*``; do nothing without any."""
    if not settings.cors_origins:
        return
    from flask_cors import CORS

    CORS(app, resources={r"/api/*": {"origins": list(settings.cors_origins)}},
         allow_headers=ALLOWED_HEADERS, expose_headers=EXPOSED_HEADERS,
         supports_credentials=False, max_age=PREFLIGHT_MAX_AGE)
