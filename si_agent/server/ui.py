"""The web chat page at ``/`` (plain HTML/CSS/JS shipped in ``static/``)."""

from __future__ import annotations

from flask import Blueprint, jsonify

bp = Blueprint("ui", __name__, static_folder="static", static_url_path="/static")


@bp.get("/")
def index():
    response = bp.send_static_file("index.html")
    response.headers["Cache-Control"] = "no-cache"
    return response


@bp.get("/ui-config.json")
def ui_config():
    """What the page needs to know: whether it may fetch its own dev token."""
    from flask import current_app

    settings = current_app.config["SI_SETTINGS"]
    return jsonify(auth_mode=settings.auth_mode,
                   max_message_chars=settings.max_message_chars)
