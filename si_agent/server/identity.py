"""The request's token, decoded and verified once: the rate limiter and the view share it.

flask-jwt-extended's ``jwt_required`` decodes the token on every call, and the
rate limiter needs the identity before the view runs, so a limited view used to
decode it twice. ``rate_key`` verifies it once with ``verify_jwt_in_request``
(which leaves the claims in the request context, where ``get_jwt`` and
``get_jwt_identity`` read them) and notes the outcome on ``flask.g``;
``token_required`` then lets the view run without decoding again, or, when no
valid token was seen, verifies as ``jwt_required()`` does, so that a missing,
invalid or expired token gets its usual 401 answer.

A request whose token does not verify (junk, expired, wrong type) has no rate key:
it is not counted, and the view answers its 401 at once. Counting it per client
address would let junk tokens from one client behind a proxy use up the address
bucket that every other user behind that proxy shares, so their expired-token
requests would get 429 instead of the 401 ``token_expired`` that tells the page to
refresh. Only requests without any token are counted per address.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from flask import current_app, g, request
from flask_jwt_extended import get_jwt_identity, verify_jwt_in_request
from flask_jwt_extended.exceptions import JWTExtendedException
from jwt.exceptions import PyJWTError

__all__ = ["rate_key", "token_required", "verified"]


def verified() -> bool:
    """Whether the request carries a valid access token (decoded at most once)."""
    seen = g.get("si_token_verified")
    if seen is None:
        try:  # None without a token (or on OPTIONS)
            seen = verify_jwt_in_request(optional=True) is not None
        except (JWTExtendedException, PyJWTError):
            seen = False  # the view's token_required answers it with the precise 401
            g.si_token_rejected = True
        g.si_token_verified = seen
    return seen


def rate_key() -> str | None:
    """Rate limits are per user (token identity), else per client address; ``None``
    (not counted) when a token was sent but does not verify (see the module docstring)."""
    if verified():
        identity = get_jwt_identity()
        if isinstance(identity, str):
            return f"user:{identity}"
    elif g.get("si_token_rejected"):
        return None
    return f"ip:{request.remote_addr}"


def token_required(view: Callable[..., Any]) -> Callable[..., Any]:
    """``jwt_required()`` that reuses a token already verified in this request."""

    @wraps(view)
    def guarded(*args: Any, **kwargs: Any) -> Any:
        if not g.get("si_token_verified"):
            verify_jwt_in_request()  # raises the JWT errors init_auth answers as 401
        return current_app.ensure_sync(view)(*args, **kwargs)

    return guarded
