"""Staff routes: ``GET /api/admin/audit``, for tokens with the admin role only.

The role is the token's ``roles`` claim (a list of strings) containing
``admin``, as identity providers issue it; ``si-agent admin-token`` mints one
with the server's HS256 secret. No token (or an invalid one) answers 401, a
valid token without the role 403.
"""

from __future__ import annotations

import re

from flask import Blueprint, current_app, jsonify, request
from flask_jwt_extended import get_jwt, jwt_required

from si_agent.audit import AuditLog, parse_since
from si_agent.server.auth import current_user
from si_agent.server.errors import ApiError

bp = Blueprint("admin", __name__)

ROLES_CLAIM = "roles"
ADMIN_ROLE = "admin"
DEFAULT_LIMIT = 100
MAX_LIMIT = 1000
_BUSINESS = re.compile(r"[A-Za-z0-9_\-]{1,64}")


def require_admin() -> str:
    """The verified admin's id; ``ApiError`` 401/403 otherwise (call under ``jwt_required``)."""
    staff = current_user()
    roles = get_jwt().get(ROLES_CLAIM)
    if not (isinstance(roles, list) and ADMIN_ROLE in roles):
        raise ApiError(403, "admin_required")
    return staff


@bp.get("/api/admin/audit")
@jwt_required()
def audit():
    require_admin()
    business = request.args.get("business")
    if business is not None and not _BUSINESS.fullmatch(business):
        raise ApiError(400, "invalid_audit_query")
    since = request.args.get("since")
    try:
        since_time = parse_since(since) if since is not None else None
        limit = int(request.args.get("limit", DEFAULT_LIMIT))
    except ValueError:
        raise ApiError(400, "invalid_audit_query") from None
    if not 1 <= limit <= MAX_LIMIT:
        raise ApiError(400, "invalid_audit_query")
    log: AuditLog = current_app.config["SI_CONTROLLER"].audit
    entries = log.query(business=business, since=since_time, limit=limit)
    return jsonify(entries=[e.model_dump(mode="json") for e in entries], count=len(entries))
