"""The demo backend's HTTP API: a Flask blueprint and an app factory.

Routes (relative to where the blueprint is mounted; ``create_demo_app`` mounts
it at the root, the API server at ``/demo``):

    GET|POST /api/<business_id>         run a business with a JSON body (or query)
    POST     /api/_admin/fail_next      {"count": n, "status": 503}: fail the next n calls
    GET      /api/_admin/applications   every stored application, newest first

Every call of a handle-type business is logged in the ``calls`` table (business,
idempotency key, status), so tests can count submissions. Success answers 200 with a JSON object; refusals answer
``{"error": {"message": str, "fields": {key: message}}}`` with 400 (malformed
request), 404 (nothing found), 422 (data refused) or an injected status.
Handle-type businesses need an ``Idempotency-Key`` header: a key seen before
returns the stored response (header ``Idempotent-Replayed: true``) and
creates nothing. Only successes are stored, so corrected data may be sent
again under the same key after a refusal.
"""

from __future__ import annotations

import json
import logging
import sqlite3
from pathlib import Path
from typing import Any

from flask import Blueprint, Flask, Response, request
from werkzeug.exceptions import HTTPException

from si_agent.demo_backend import clock, texts
from si_agent.demo_backend.db import connection, fail_next, take_failure, transaction
from si_agent.demo_backend.services import SERVICES, Ctx, DemoError, Service

logger = logging.getLogger(__name__)


def json_response(
    payload: Any, status: int = 200, headers: dict[str, str] | None = None
) -> Response:
    """A UTF-8 JSON response with Chinese kept readable, whatever the host app's settings."""
    return Response(
        json.dumps(payload, ensure_ascii=False),
        status=status,
        headers=headers,
        mimetype="application/json",
    )


def error_response(status: int, message: str, fields: dict[str, str] | None = None) -> Response:
    error: dict[str, Any] = {"message": message}
    if fields:
        error["fields"] = fields
    return json_response({"error": error}, status)


def demo_blueprint(db_path: str | Path) -> Blueprint:
    """The demo backend's routes over the SQLite file ``db_path`` (created on first use)."""
    bp = Blueprint("si_demo_backend", __name__)

    @bp.errorhandler(DemoError)
    def _refused(exc: DemoError) -> Response:
        return error_response(exc.status, exc.message, exc.fields)

    @bp.errorhandler(Exception)
    def _crash(exc: Exception) -> Response | HTTPException:
        if isinstance(exc, HTTPException):
            return exc
        logger.exception("demo backend failed on %s %s", request.method, request.path)
        return error_response(500, texts.INTERNAL)

    @bp.post("/api/_admin/fail_next")
    def admin_fail_next() -> Response:
        body = _json_object(required=False)
        try:
            count = int(body.get("count", 1))
            status = int(body.get("status", 503))
            fail_next(db_path, count, status)
        except (TypeError, ValueError) as exc:
            return error_response(400, str(exc))
        return json_response({"count": count, "status": status})

    @bp.get("/api/_admin/applications")
    def admin_applications() -> Response:
        with connection(db_path) as conn:
            rows = conn.execute(
                "SELECT * FROM applications ORDER BY created_at DESC, application_no DESC"
            ).fetchall()
        apps = [{**dict(r), "payload": json.loads(r["payload"])} for r in rows]
        return json_response({"applications": apps})

    @bp.route("/api/<business_id>", methods=["GET", "POST"])
    def business(business_id: str) -> Response:
        service = SERVICES.get(business_id)
        if service is None:
            return error_response(404, texts.UNKNOWN_BUSINESS.format(business_id=business_id))
        key = request.headers.get("Idempotency-Key", "").strip()
        if not service.handle:  # a query changes nothing: no write transaction
            with connection(db_path) as conn:
                return _serve(conn, business_id, service, key)
        # One transaction per submission: its work, and the call in the ``calls``
        # log (refused or not, so tests can count submissions).
        with connection(db_path) as conn, transaction(conn):
            conn.execute("SAVEPOINT work")
            try:
                response = _serve(conn, business_id, service, key)
            except DemoError as exc:  # a refusal undoes the work, not the log line
                conn.execute("ROLLBACK TO work")
                response = error_response(exc.status, exc.message, exc.fields)
            conn.execute("RELEASE work")
            conn.execute(
                "INSERT INTO calls (business_id, idempotency_key, status, at) VALUES (?, ?, ?, ?)",
                (business_id, key or None, response.status_code,
                 clock.now().isoformat(timespec="seconds")))
            return response

    return bp


def _serve(conn: sqlite3.Connection, business_id: str, service: Service, key: str) -> Response:
    injected = take_failure(conn)
    if injected is not None:
        return error_response(injected, texts.BUSY)
    body = _body()
    missing = service.missing(body)
    if missing:
        return error_response(400, texts.MISSING_FIELDS.format(keys="、".join(missing)))
    if not service.handle:
        return json_response(_declared(business_id, service, service.run(Ctx(conn, clock.now()), body)))
    if not key:
        return error_response(400, texts.MISSING_IDEMPOTENCY_KEY)
    return _handle(conn, business_id, service, key, body)


def _declared(business_id: str, service: Service, result: dict) -> dict:
    """``result``, if it has exactly the keys its endpoint declares (a 500 otherwise:
    ``si-agent validate`` checks result templates against the declaration)."""
    differ = service.undeclared(result)
    if differ:
        raise RuntimeError(f"demo backend: {business_id} answered keys that differ from "
                           f"endpoints.ENDPOINTS: {sorted(differ)}")
    return result


def _body() -> dict:
    if request.method == "GET":
        return request.args.to_dict()
    return _json_object()


def _json_object(*, required: bool = True) -> dict:
    """The request's JSON object; a ``DemoError`` 400 for anything else (``{}`` for no
    body at all when not ``required``)."""
    if not required and not request.get_data(cache=True):
        return {}
    try:
        body = request.get_json(silent=True)
    except RecursionError:  # absurdly deep nesting is malformed input, not a crash
        body = None
    if not isinstance(body, dict):
        raise DemoError(400, texts.NOT_JSON_OBJECT)
    return body


def _handle(
    conn: sqlite3.Connection, business_id: str, service: Service, key: str, body: dict
) -> Response:
    """Run a handle-type business at most once per idempotency key (inside the call's
    write transaction)."""
    stored = conn.execute(
        "SELECT business_id, response FROM idempotency WHERE key = ?", (key,)
    ).fetchone()
    if stored is None:
        result = _declared(business_id, service, service.run(Ctx(conn, clock.now()), body))
        # The UNIQUE key is the last line of defence; the write lock taken by the
        # call's transaction already keeps concurrent duplicates out.
        conn.execute(
            "INSERT INTO idempotency (key, business_id, response, created_at)"
            " VALUES (?, ?, ?, ?)",
            (key, business_id, json.dumps(result, ensure_ascii=False),
             clock.now().isoformat(timespec="seconds")),
        )
        return json_response(result)
    if stored["business_id"] != business_id:
        return error_response(422, texts.IDEMPOTENCY_KEY_REUSED)
    return json_response(json.loads(stored["response"]), headers={"Idempotent-Replayed": "true"})


def create_demo_app(db_path: str | Path) -> Flask:
    """A standalone Flask app serving the demo backend at the root (``/api/...``)."""
    app = Flask(__name__)
    app.register_blueprint(demo_blueprint(db_path))

    @app.errorhandler(HTTPException)
    def _http_error(exc: HTTPException) -> Response:
        message = {404: texts.NOT_FOUND, 405: texts.METHOD_NOT_ALLOWED}.get(
            exc.code or 500, exc.description or texts.INTERNAL
        )
        return error_response(exc.code or 500, message)

    return app
