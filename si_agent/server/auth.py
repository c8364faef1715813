"""Authentication: JWT bearer tokens, and ``POST /api/token`` for dev and gateways.

- ``SI_AUTH_MODE=dev`` (default): anyone may get a token for any user id.
- ``SI_AUTH_MODE=prod``: tokens issued by the deployment's identity provider are
  accepted (HS256 shared secret or RS256 public key); ``/api/token`` exists only
  when trusted gateway clients are configured (HTTP Basic ``id:secret``), and the
  app refuses to start with a missing or default secret.
"""

from __future__ import annotations

import hmac
import re
from datetime import timedelta

from flask import Blueprint, Flask, current_app, jsonify, request
from flask_jwt_extended import JWTManager, create_access_token, get_jwt, get_jwt_identity

from si_agent.config.settings import DEV_JWT_SECRET, Settings
from si_agent.errors import DefinitionError
from si_agent.server.errors import ApiError, error_response

bp = Blueprint("auth", __name__)
_USER_ID = re.compile(r"[A-Za-z0-9_.@:\-]{1,64}")
_MIN_SECRET = 32


class InsecureSettings(DefinitionError, ValueError):
    """The settings are not safe for production."""


def check_production(settings: Settings) -> None:
    """Raise ``InsecureSettings`` if prod mode is configured unsafely."""
    if settings.auth_mode != "prod":
        return
    if settings.jwt_algorithm == "RS256":
        if not settings.jwt_public_key:
            raise InsecureSettings("SI_AUTH_MODE=prod with RS256 needs SI_JWT_PUBLIC_KEY")
        if settings.gateway_clients:
            raise InsecureSettings("SI_GATEWAY_CLIENTS needs SI_JWT_ALGORITHM=HS256 to sign tokens")
        return
    if settings.jwt_secret == DEV_JWT_SECRET or len(settings.jwt_secret) < _MIN_SECRET:
        raise InsecureSettings(
            f"SI_AUTH_MODE=prod needs SI_JWT_SECRET set to a random value of {_MIN_SECRET}+ "
            "characters (the default development secret is refused)"
        )


def init_auth(app: Flask, settings: Settings) -> None:
    """Configure flask-jwt-extended and its JSON error answers."""
    check_production(settings)
    app.config.update(
        JWT_TOKEN_LOCATION=["headers"],
        JWT_ALGORITHM=settings.jwt_algorithm,
        JWT_DECODE_ALGORITHMS=[settings.jwt_algorithm],
        JWT_ACCESS_TOKEN_EXPIRES=timedelta(seconds=settings.jwt_expires),
        JWT_ERROR_MESSAGE_KEY="message",
    )
    if settings.jwt_algorithm == "RS256":
        app.config["JWT_PUBLIC_KEY"] = settings.jwt_public_key
    else:
        app.config["JWT_SECRET_KEY"] = settings.jwt_secret
    if settings.jwt_issuer:
        app.config["JWT_DECODE_ISSUER"] = settings.jwt_issuer
        app.config["JWT_ENCODE_ISSUER"] = settings.jwt_issuer
    if settings.jwt_audience:
        app.config["JWT_DECODE_AUDIENCE"] = settings.jwt_audience
        app.config["JWT_ENCODE_AUDIENCE"] = settings.jwt_audience
    jwt = JWTManager(app)

    @jwt.unauthorized_loader
    def _missing(reason: str):
        return error_response(401, "missing_token")

    @jwt.invalid_token_loader
    def _invalid(reason: str):
        return error_response(401, "invalid_token")

    @jwt.expired_token_loader
    def _expired(header: dict, payload: dict):
        return error_response(401, "token_expired")

    @jwt.token_verification_failed_loader
    def _failed(header: dict, payload: dict):
        return error_response(401, "invalid_token")

    @jwt.user_lookup_error_loader
    def _lookup(header: dict, payload: dict):
        return error_response(401, "invalid_token")

    app.register_blueprint(bp)


def current_user() -> str:
    """The user id of the verified token (a session belongs to it)."""
    identity = get_jwt_identity()
    if not isinstance(identity, str) or not _USER_ID.fullmatch(identity):
        raise ApiError(401, "invalid_token")
    if "exp" not in get_jwt():  # a token that never expires is not accepted
        raise ApiError(401, "invalid_token")
    return identity


@bp.post("/api/token")
def issue_token():
    settings: Settings = current_app.config["SI_SETTINGS"]
    if settings.auth_mode == "prod":
        if not settings.gateway_clients:
            raise ApiError(404)
        auth = request.authorization
        if auth is None or not _known_client(settings, auth.username or "", auth.password or ""):
            raise ApiError(401, "invalid_client")
    body = json_body()
    user_id = body.get("user_id")
    if not isinstance(user_id, str) or not _USER_ID.fullmatch(user_id):
        raise ApiError(400, "invalid_user_id")
    token = create_access_token(identity=user_id)
    return jsonify(access_token=token, token_type="Bearer", expires_in=settings.jwt_expires)


def _known_client(settings: Settings, client_id: str, secret: str) -> bool:
    ok = False
    for known_id, known_secret in settings.gateway_clients:
        same = hmac.compare_digest(known_id.encode(), client_id.encode())
        ok |= same and hmac.compare_digest(known_secret.encode(), secret.encode())
    return ok


def json_body() -> dict:
    """The request's JSON object, or a 415/400 ApiError."""
    if not request.is_json:
        raise ApiError(415)
    try:
        body = request.get_json(silent=True)
    except RecursionError:  # absurdly deep nesting is malformed input, not a crash
        body = None
    if not isinstance(body, dict):
        raise ApiError(400, "malformed_json")
    return body
