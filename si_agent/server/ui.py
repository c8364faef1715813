"""The web chat page at ``/`` and the widget script ``/widget.js`` (plain HTML/CSS/JS
shipped in ``static/``).

The page runs under a strict policy: no inline script or style, same origin only.
Which other sites may show it in a frame (the widget on a bureau's site) is
``SI_EMBED_ORIGINS``: none by default (``frame-ancestors 'none'`` and
``X-Frame-Options: DENY``); with origins, ``frame-ancestors 'self'`` plus those
origins and no ``X-Frame-Options`` (its ``ALLOW-FROM`` is gone from browsers, and
``DENY`` would override the list in old ones).
"""

from __future__ import annotations

from functools import lru_cache

from flask import Blueprint, current_app, jsonify

bp = Blueprint("ui", __name__, static_folder="static", static_url_path="/static")

_POLICY = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' blob:; "
           "connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors {ancestors}")
# The widget script is fetched by other sites' pages: cached a while (a change reaches
# them within the hour) and loadable by pages that require CORP (COEP require-corp).
WIDGET_CACHE = "public, max-age=3600"


@lru_cache(maxsize=8)
def security_headers(embed_origins: tuple[str, ...] = ()) -> dict[str, str]:
    """The headers of every response of this blueprint, for the allowed embedding origins."""
    headers = {"X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer"}
    if embed_origins:
        headers["Content-Security-Policy"] = _POLICY.format(
            ancestors=" ".join(("'self'", *embed_origins)))
    else:
        headers["Content-Security-Policy"] = _POLICY.format(ancestors="'none'")
        headers["X-Frame-Options"] = "DENY"
    return headers


@bp.after_request
def _secure(response):
    response.headers.update(security_headers(current_app.config["SI_SETTINGS"].embed_origins))
    response.headers.setdefault("Cache-Control", "no-cache")
    return response


@bp.get("/")
def index():
    """The chat page; ``?embed=1`` (the widget's frame) gives it a compact header."""
    return bp.send_static_file("index.html")


@bp.get("/widget.js")
def widget():
    """The script a host site includes to show the assistant as a floating button."""
    response = bp.send_static_file("widget.js")
    response.mimetype = "text/javascript"
    response.headers["Cache-Control"] = WIDGET_CACHE
    response.headers["Cross-Origin-Resource-Policy"] = "cross-origin"
    return response


@bp.get("/ui-config.json")
def ui_config():
    """What the page needs to know: whether it may fetch its own dev token, whether it
    offers voice input."""
    settings = current_app.config["SI_SETTINGS"]
    return jsonify(auth_mode=settings.auth_mode,
                   max_message_chars=settings.max_message_chars,
                   voice=current_app.config.get("SI_RECOGNIZER") is not None,
                   voice_max_seconds=settings.voice_max_seconds)
