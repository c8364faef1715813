"""Who a console request is: a console session (the signed cookie) or a bearer token.

``identify`` is what the blueprint's checks call on every route but the sign-in
pages; the roles a token must carry and what a citizen's token gets are described
in ``si_agent.server.console.signin``.
"""

from __future__ import annotations

from dataclasses import dataclass

from flask import current_app, request, session
from flask_jwt_extended import get_jwt, verify_jwt_in_request
from flask_jwt_extended.exceptions import JWTExtendedException
from jwt.exceptions import PyJWTError

from si_agent.server.admin import ROLES_CLAIM
from si_agent.server.auth import current_user
from si_agent.server.errors import ApiError
from si_agent.staff import ROLES, ConsoleSessions

SESSION_KEY = "sid"  # the console session's token, in the signed cookie


@dataclass(frozen=True)
class Staff:
    """Who is signed in: a name, the roles, and how (``local`` account or ``token``)."""

    name: str
    roles: tuple[str, ...]
    source: str

    @property
    def is_admin(self) -> bool:
        return "admin" in self.roles


class NotSignedIn(Exception):
    """No console session and no token: to the sign-in page (401 for a POST)."""


def identify() -> Staff:
    """The staff member of this request; ``NotSignedIn``, or ``ApiError`` 401/403."""
    if request.headers.get("Authorization"):
        try:
            verify_jwt_in_request()
        except (JWTExtendedException, PyJWTError):
            raise ApiError(401, "invalid_token") from None
        return token_staff(current_user(), get_jwt())
    sid = session.get(SESSION_KEY)
    found = console_sessions().get(sid) if isinstance(sid, str) else None
    if found is None:
        raise NotSignedIn()
    return Staff(found.name, found.roles, found.source)


def token_staff(subject: object, claims: dict) -> Staff:
    """The staff member a verified token names; ``ApiError`` 401 (no subject, no
    expiry) or 403 (no staff role: a citizen's token)."""
    if not isinstance(subject, str) or not subject or "exp" not in claims:
        raise ApiError(401, "invalid_token")
    roles = claims.get(ROLES_CLAIM)
    held = tuple(r for r in ROLES if isinstance(roles, list) and r in roles)
    if not held:
        raise ApiError(403, "staff_required")
    return Staff(subject, held, "token")


def console_sessions() -> ConsoleSessions:
    return current_app.config["SI_CONSOLE_SESSIONS"]
