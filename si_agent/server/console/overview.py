"""``GET /console/``: who is signed in, and the state of what the console looks at."""

from __future__ import annotations

from flask import current_app, render_template

from si_agent.server.console.blueprint import bp


@bp.get("/")
def index():
    controller = current_app.config["SI_CONTROLLER"]
    try:
        knowledge = controller.knowledge.status()
    except Exception:  # a broken knowledge base must not take the console down with it
        knowledge = {"ok": False, "state": "unavailable", "detail": "status check failed"}
    return render_template(
        "console/index.html",
        knowledge=knowledge,
        businesses=sorted(controller.catalog.values(), key=lambda b: b.id),
    )
