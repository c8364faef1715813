"""Authentication: JWT bearer tokens, ``POST /api/token``, ``/api/token/refresh``, ``/api/logout``.

- ``SI_AUTH_MODE=dev`` (default): anyone may get a token for any user id.
- ``SI_AUTH_MODE=prod``: tokens issued by the deployment's identity provider are
  accepted (HS256 shared secret or RS256 public key); ``/api/token`` exists only
  when trusted gateway clients are configured (HTTP Basic ``id:secret``), and the
  app refuses to start with a missing or default secret.

Tokens: ``/api/token`` returns an access token (``SI_JWT_EXPIRES``) and a refresh
token (``SI_JWT_REFRESH_EXPIRES``) of a new family; ``/api/token/refresh`` trades the
refresh token (as the bearer) for a new access token *and* a new refresh token of the
same family: each refresh token works once, and a second use revokes the family.
``/api/logout`` revokes the access token sent and its family; ``DELETE /api/session``
revokes the access token it was called with. Revoked tokens are answered 401
``token_revoked`` (``si_agent.server.revocation``; docs/security.md "Token lifecycle").
Only access tokens open the API.

In dev mode without ``SI_JWT_SECRET`` tokens are signed with a random secret of the
data directory (``si_agent.config.dev_secret``), never with a constant.

Keys: ``SI_JWT_KEYS`` (``kid:key,...``) is a key set for rotation. Tokens issued
here are signed with the first key and carry its id in the ``kid`` header; a token is verified with
the key its ``kid`` names (one without ``kid`` with the signing key), and an
unknown ``kid`` is an invalid token. Without a key set, the single
``SI_JWT_SECRET`` / ``SI_JWT_PUBLIC_KEY`` works as before (no ``kid``).
"""

from __future__ import annotations

import hmac
import re
import uuid
from datetime import timedelta

from flask import Blueprint, Flask, current_app, jsonify, request
from flask_jwt_extended import (
    JWTManager,
    create_access_token,
    create_refresh_token,
    get_jwt,
    get_jwt_identity,
    verify_jwt_in_request,
)
from jwt.exceptions import InvalidTokenError

from si_agent.config.settings import DEV_JWT_SECRET, Settings
from si_agent.errors import InsecureSettings
from si_agent.server.errors import ApiError, error_response
from si_agent.server.identity import CachingJWTManager, token_required
from si_agent.server.revocation import is_revoked, revoke_family, revoke_token, use_refresh
from si_agent.session.denylist import TokenDenylist

bp = Blueprint("auth", __name__)
_USER_ID = re.compile(r"[A-Za-z0-9_.@:\-]{1,64}")
_MIN_SECRET = 32


def check_production(settings: Settings) -> None:
    """Raise ``InsecureSettings`` if prod mode is configured unsafely (every key is checked)."""
    if settings.auth_mode != "prod":
        return
    if settings.jwt_algorithm == "RS256":
        if not settings.jwt_public_key and not settings.jwt_keys:
            raise InsecureSettings("SI_AUTH_MODE=prod with RS256 needs SI_JWT_PUBLIC_KEY "
                                   "or SI_JWT_KEYS")
        if settings.gateway_clients:
            raise InsecureSettings("SI_GATEWAY_CLIENTS needs SI_JWT_ALGORITHM=HS256 to sign tokens")
    elif not settings.jwt_keys:
        if _weak(settings.jwt_secret):
            raise InsecureSettings(
                f"SI_AUTH_MODE=prod needs SI_JWT_SECRET set to a random value of {_MIN_SECRET}+ "
                "characters (the default development secret is refused)"
            )
    else:
        for kid, secret in settings.jwt_keys:
            if _weak(secret):
                raise InsecureSettings(
                    f"SI_AUTH_MODE=prod needs every SI_JWT_KEYS secret to be a random value of "
                    f"{_MIN_SECRET}+ characters; kid {kid!r} is not (the default development "
                    "secret is refused)"
                )
    _check_derived_secrets(settings)


def _weak(secret: str) -> bool:
    return secret == DEV_JWT_SECRET or len(secret) < _MIN_SECRET


def _check_derived_secrets(settings: Settings) -> None:
    """With a key set or RS256, SI_JWT_SECRET signs nothing and may be left at its
    default; the audit pepper and the step-file key fall back to it, so each needs
    its own variable then."""
    if not _weak(settings.jwt_secret):
        return
    for variable, value, use in (("SI_AUDIT_PEPPER", settings.audit_pepper, "audit log user hashes"),
                                 ("SI_UPLOAD_KEY", settings.upload_key, "step file encryption")):
        if not value:
            raise InsecureSettings(
                f"SI_AUTH_MODE=prod needs {variable} set: SI_JWT_SECRET is the default "
                f"development secret or shorter than {_MIN_SECRET} characters, and {use} "
                "would fall back to it"
            )


class KeySet:
    """The keys tokens are signed and verified with, by ``kid`` (see the module docstring)."""

    def __init__(self, settings: Settings) -> None:
        self.keys = dict(settings.jwt_keys)
        self.signing_kid = next(iter(self.keys), None)  # the first key signs

    def headers(self) -> dict[str, str]:
        """Headers of a token issued here: the signing key's ``kid``."""
        return {"kid": self.signing_kid} if self.signing_kid else {}

    def signing_key(self) -> str:
        return self.keys[self.signing_kid]

    def verification_key(self, header: dict) -> str:
        """The key a token's header names; ``InvalidTokenError`` for an unknown ``kid``."""
        kid = header.get("kid", self.signing_kid)
        if not isinstance(kid, str) or kid not in self.keys:
            raise InvalidTokenError("unknown kid")
        return self.keys[kid]


def init_auth(app: Flask, settings: Settings, denylist: TokenDenylist | None = None) -> None:
    """Configure flask-jwt-extended and its JSON error answers; with ``denylist``, every
    request's token is checked against it (``si_agent.server.revocation``)."""
    check_production(settings)
    app.config.update(
        JWT_TOKEN_LOCATION=["headers"],
        JWT_ALGORITHM=settings.jwt_algorithm,
        JWT_DECODE_ALGORITHMS=[settings.jwt_algorithm],
        JWT_ACCESS_TOKEN_EXPIRES=timedelta(seconds=settings.jwt_expires),
        JWT_REFRESH_TOKEN_EXPIRES=timedelta(seconds=settings.jwt_refresh_expires),
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
    jwt = CachingJWTManager(app)  # remembers verified tokens (server.identity)
    if settings.jwt_keys:
        _use_key_set(jwt, KeySet(settings), signs=settings.jwt_algorithm == "HS256")

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

    if denylist is not None:
        app.config["SI_DENYLIST"] = denylist
        # Runs on every request after the token is decoded (or found in the cache).
        jwt.token_in_blocklist_loader(lambda header, payload: is_revoked(payload))

        @jwt.revoked_token_loader
        def _revoked(header: dict, payload: dict):
            return error_response(401, "token_revoked")

    app.register_blueprint(bp)


def _use_key_set(jwt: JWTManager, keys: KeySet, *, signs: bool) -> None:
    """Verify by ``kid``; with HS256 also sign with the current key and name it."""
    jwt.decode_key_loader(lambda header, payload: keys.verification_key(header))
    if signs:
        jwt.encode_key_loader(lambda identity: keys.signing_key())
        jwt.additional_headers_loader(lambda identity: keys.headers())


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
    """An access token and a refresh token for ``user_id``."""
    settings = _token_settings()
    if settings.auth_mode == "prod":
        auth = request.authorization
        if auth is None or not _known_client(settings, auth.username or "", auth.password or ""):
            raise ApiError(401, "invalid_client")
    body = json_body()
    user_id = body.get("user_id")
    if not isinstance(user_id, str) or not _USER_ID.fullmatch(user_id):
        raise ApiError(400, "invalid_user_id")
    return _token_pair(settings, user_id, uuid.uuid4().hex)


@bp.post("/api/token/refresh")
def refresh_token():
    """A new access token and a new refresh token for the refresh token sent as the
    bearer, which is used up; a used one revokes its whole family (401 ``token_reused``)."""
    settings = _token_settings()
    verify_jwt_in_request(refresh=True)  # also refuses a revoked token or family
    user_id = current_user()
    claims = get_jwt()
    fam = claims.get("fam")
    if not isinstance(claims.get("jti"), str) or not isinstance(fam, str):
        raise ApiError(401, "invalid_token")
    if not use_refresh(claims):
        raise ApiError(401, "token_reused")
    return _token_pair(settings, user_id, fam)


@bp.post("/api/logout")
@token_required
def logout():
    """Revoke the access token sent and its family (the refresh tokens issued with it)."""
    current_user()
    claims = get_jwt()
    revoke_token(claims)
    revoke_family(claims)
    return "", 204


def _token_pair(settings: Settings, user_id: str, fam: str):
    claims = {"fam": fam}
    return jsonify(access_token=create_access_token(identity=user_id, additional_claims=claims),
                   token_type="Bearer", expires_in=settings.jwt_expires,
                   refresh_token=create_refresh_token(identity=user_id, additional_claims=claims),
                   refresh_expires_in=settings.jwt_refresh_expires)


def _token_settings() -> Settings:
    """The settings, or a 404 where this app issues no tokens (prod without gateways)."""
    settings: Settings = current_app.config["SI_SETTINGS"]
    if settings.auth_mode == "prod" and not settings.gateway_clients:
        raise ApiError(404)
    return settings


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
