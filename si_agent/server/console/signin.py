"""Signing in to the console: local accounts, gateway tokens, and who a request is.

- ``POST /console/login`` (name and password of a local account, ``si-agent staff
  add``) and ``POST /console/login/token`` (an access token of the deployment's
  gateway, pasted) open a console session (``si_agent.staff.ConsoleSessions``)
  whose id goes into the signed cookie; a token's session ends with the token's
  own expiry at the latest. Failed sign-ins are rate-limited per client address and
  the password sign-in per name too (``SI_CONSOLE_LOGIN_LIMIT``; successful ones do
  not count); both are audited, failures included.
- A request with ``Authorization: Bearer`` (a gateway in front that adds its
  user's token) is that token's staff member, without a console session.
- ``POST /console/logout`` ends the session.

A token must verify as the API's do (keys, issuer, audience, expiry, revocation),
be an access token and carry ``staff`` or ``admin`` in its ``roles`` claim; a
citizen's token is refused 403.
"""

from __future__ import annotations

import logging
import time

from flask import current_app, redirect, render_template, request, session, url_for
from flask_jwt_extended import decode_token
from flask_jwt_extended.exceptions import JWTExtendedException
from jwt.exceptions import PyJWTError

from si_agent.audit import AuditLog, StaffAction
from si_agent.server.console import texts
from si_agent.server.console.blueprint import bp, signed_in
from si_agent.server.console.identity import (
    SESSION_KEY,
    Staff,
    console_sessions,
    token_staff,
)
from si_agent.server.errors import ApiError
from si_agent.server.ratelimit import RateLimited, RateLimiter
from si_agent.server.revocation import is_revoked
from si_agent.staff import Accounts

log = logging.getLogger(__name__)

MAX_FIELD = 4096  # a name, password or token longer than this is not one
LIMIT_SCOPE = "console-login"


@bp.route("/login", methods=["GET", "POST"])
def login():
    if request.method == "GET":
        return render_template("console/login.html")
    name = request.form.get("name", "").strip()[:MAX_FIELD]
    password = request.form.get("password", "")[:MAX_FIELD]
    keys = (f"ip:{request.remote_addr}", f"name:{name}")
    limited = _limited(*keys)
    if limited:
        return limited
    account = _accounts().verify(name, password)
    if account is None:
        _failed(*keys)
        known = _accounts().get(name) is not None
        _audit().staff(
            name if known else "<unknown account>",
            StaffAction.SIGN_IN_FAILED,
            outcome="refused",
            detail=f"password sign-in from {request.remote_addr}",
        )
        return render_template("console/login.html", error=texts.WRONG_PASSWORD, name=name), 401
    return _sign_in(
        Staff(account.name, account.roles, "local"), time.time() + _lifetime(), "password"
    )


@bp.post("/login/token")
def login_token():
    token = request.form.get("token", "").strip()[:MAX_FIELD]
    key = f"ip:{request.remote_addr}"
    limited = _limited(key)
    if limited:
        return limited
    try:
        claims = decode_token(token)
        if claims.get("type") != "access" or is_revoked(claims):
            raise ApiError(401, "invalid_token")
        staff = token_staff(claims.get("sub"), claims)
    except (JWTExtendedException, PyJWTError, ApiError) as exc:
        _failed(key)
        status = exc.status if isinstance(exc, ApiError) else 401
        _audit().staff(
            "<token>",
            StaffAction.SIGN_IN_FAILED,
            outcome="refused",
            detail=f"token sign-in from {request.remote_addr}: "
            f"{'no staff role' if status == 403 else 'invalid token'}",
        )
        message = texts.ROLE_REQUIRED if status == 403 else texts.BAD_TOKEN
        return render_template("console/login.html", token_error=message), status
    expires = min(float(claims["exp"]), time.time() + _lifetime())
    return _sign_in(staff, expires, "gateway token")


@bp.post("/logout")
def logout():
    staff = signed_in()
    sid = session.get(SESSION_KEY)
    if isinstance(sid, str):
        console_sessions().close(sid)
    session.clear()
    # Off the hand-off queue at once (as 离开队列): its presence lease would otherwise let
    # the next citizen be told a person is coming. A page still open elsewhere beats again.
    current_app.config["SI_CONTROLLER"].handoff.leave(staff.name)
    _audit().staff(staff.name, StaffAction.SIGNED_OUT)
    return render_template("console/login.html", notice=texts.SIGNED_OUT)


def _sign_in(staff: Staff, expires: float, how: str):
    sid = console_sessions().open(
        staff.name, staff.roles, "local" if staff.source == "local" else "token", expires
    )
    session.clear()  # a new CSRF token with the new session
    session[SESSION_KEY] = sid
    session.permanent = True
    _audit().staff(
        staff.name,
        StaffAction.SIGNED_IN,
        detail=f"{how} sign-in from {request.remote_addr}, roles {','.join(staff.roles)}",
    )
    return redirect(url_for("console.index"), code=303)


def _limited(*keys: str):
    """The sign-in page answered 429 if any of ``keys`` has failed too often, else None.
    Only failures count (``_failed``): an office behind one address signs in all day."""
    limiter: RateLimiter = current_app.config["SI_CONSOLE_LOGIN_LIMIT"]
    try:
        for key in keys:
            limiter.check(key, LIMIT_SCOPE)
    except RateLimited as exc:
        log.warning("console sign-in rate-limited (%s)", keys[0])
        page = render_template(
            "console/login.html", error=texts.TOO_MANY_ATTEMPTS.format(seconds=exc.retry_after)
        )
        return page, 429, {"Retry-After": str(exc.retry_after)}
    return None


def _failed(*keys: str) -> None:
    """Count a failed sign-in against ``keys`` (the next attempt over the limit gets 429)."""
    limiter: RateLimiter = current_app.config["SI_CONSOLE_LOGIN_LIMIT"]
    for key in keys:
        try:
            limiter.hit(key, LIMIT_SCOPE)
        except RateLimited:
            pass  # this attempt was already let through; the next one is refused


def _lifetime() -> float:
    return current_app.config["PERMANENT_SESSION_LIFETIME"].total_seconds()


def _accounts() -> Accounts:
    return current_app.config["SI_STAFF_ACCOUNTS"]


def _audit() -> AuditLog:
    return current_app.config["SI_CONTROLLER"].audit
