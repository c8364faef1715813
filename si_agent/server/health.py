"""``GET /healthz`` (the process answers) and ``GET /readyz`` (it can serve)."""

from __future__ import annotations

from flask import Blueprint, current_app, jsonify

bp = Blueprint("health", __name__)


@bp.get("/healthz")
def healthz():
    return jsonify(status="ok")


@bp.get("/readyz")
def readyz():
    controller = current_app.config["SI_CONTROLLER"]
    store = controller.store
    store_ok = store.ping()
    knowledge = getattr(controller.knowledge, "status", None)
    kb = knowledge() if callable(knowledge) else {"ok": True, "detail": "not configured"}
    checks = {
        "config": {"ok": True, "businesses": len(controller.catalog)},
        "session_store": {"ok": store_ok, "backend": getattr(store, "name", type(store).__name__)},
        "knowledge_base": kb,
    }
    # The knowledge base is optional: business dialogues work without it.
    ready = checks["config"]["ok"] and store_ok
    return jsonify(status="ready" if ready else "unavailable", checks=checks), (
        200 if ready else 503
    )
