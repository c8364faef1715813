"""``GET /healthz`` (the process answers) and ``GET /readyz`` (it can serve).

Readiness needs the configuration and the session store. The knowledge base
is reported (``ready``, ``building``, ``unavailable``, ``locked`` when another
process has its Milvus Lite directory open, ``disabled`` without the ``rag``
extra, ``not configured``) but never makes the service unready: business
dialogues work without it. A check that is not ok without making the service
unready is listed in ``degraded`` (e.g. ``["knowledge_base"]`` while its Milvus
Lite file is locked by another process), for monitoring to alert on. An unready
answer is a 503 with ``Retry-After``, like every other 503 of the API.
"""

from __future__ import annotations

import logging

from flask import Blueprint, current_app, jsonify

from si_agent.server.errors import RETRY_AFTER_SECONDS

log = logging.getLogger(__name__)

bp = Blueprint("health", __name__)


@bp.get("/healthz")
def healthz():
    return jsonify(status="ok")


@bp.get("/readyz")
def readyz():
    controller = current_app.config["SI_CONTROLLER"]
    store = controller.store
    store_ok = store.ping()
    checks = {
        "config": {"ok": True, "businesses": len(controller.catalog)},
        "session_store": {"ok": store_ok, "backend": getattr(store, "name", type(store).__name__)},
        "knowledge_base": _knowledge_status(controller.knowledge),
    }
    ready = checks["config"]["ok"] and store_ok
    degraded = [name for name in _OPTIONAL if not checks[name]["ok"]]
    body = jsonify(status="ready" if ready else "unavailable", degraded=degraded,
                   checks=checks)
    if ready:
        return body, 200
    return body, 503, {"Retry-After": str(RETRY_AFTER_SECONDS)}


_OPTIONAL = ("knowledge_base",)  # checks that never make the service unready


def _knowledge_status(knowledge) -> dict:
    try:
        return knowledge.status()
    except Exception:  # a broken knowledge base must not take readiness down with it
        log.exception("knowledge base status check failed")
        return {"ok": False, "state": "unavailable", "detail": "status check failed"}
