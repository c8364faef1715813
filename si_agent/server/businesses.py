"""``GET /api/businesses``: the services this deployment offers; ``online`` is false for
one that cannot be done here now (its executor or a step lacks something: the start-up
check), which the page leaves out of its examples."""

from __future__ import annotations

from flask import Blueprint, current_app, jsonify

bp = Blueprint("businesses", __name__)


@bp.get("/api/businesses")
def list_businesses():
    controller = current_app.config["SI_CONTROLLER"]
    return jsonify([
        {"id": b.id, "name": b.name, "type": b.type, "description": b.description,
         "online": b.id not in controller.unavailable}
        for b in controller.catalog.values()
    ])
