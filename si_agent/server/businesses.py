"""``GET /api/businesses``: the services this deployment offers."""

from __future__ import annotations

from flask import Blueprint, current_app, jsonify

bp = Blueprint("businesses", __name__)


@bp.get("/api/businesses")
def list_businesses():
    catalog = current_app.config["SI_CONTROLLER"].catalog
    return jsonify([
        {"id": b.id, "name": b.name, "type": b.type, "description": b.description}
        for b in catalog.values()
    ])
