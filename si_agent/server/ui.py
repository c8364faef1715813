"""The web chat page at ``/`` (plain HTML/CSS/JS shipped in ``static/``)."""

from __future__ import annotations

from flask import Blueprint, jsonify

bp = Blueprint("ui", __name__, static_folder="static", static_url_path="/static")

# The page runs under a strict policy: no inline script or style, same origin only.
SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' blob:; "
        "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}


@bp.after_request
def _secure(response):
    response.headers.update(SECURITY_HEADERS)
    response.headers.setdefault("Cache-Control", "no-cache")
    return response


@bp.get("/")
def index():
    return bp.send_static_file("index.html")


@bp.get("/ui-config.json")
def ui_config():
    """What the page needs to know: whether it may fetch its own dev token."""
    from flask import current_app

    settings = current_app.config["SI_SETTINGS"]
    return jsonify(auth_mode=settings.auth_mode,
                   max_message_chars=settings.max_message_chars)
