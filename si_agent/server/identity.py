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

Across requests, ``CachingJWTManager`` remembers the tokens it has verified (a
bounded LRU of ``VERIFIED_TOKENS`` per process): a citizen's next turn with the same
token skips PyJWT's three parses and the HMAC. A remembered token is still checked
against its ``exp`` (as PyJWT does: ``int(exp)``, with the decode leeway) on every
use and verified afresh once expired, so the 401 says ``token_expired``. Only tokens
that verified are kept, by their exact text, so a copy with another payload or
signature is verified (and refused) as before. Keys change only with a restart,
which empties the cache. Revocation cannot be bypassed by it: flask-jwt-extended's
blocklist callback (``si_agent.server.revocation.is_revoked``) runs on every request
after the decode, cached or not (docs/security.md "Token lifecycle").
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable
from datetime import timedelta
from functools import lru_cache, wraps
from typing import Any

from flask import current_app, g, request
from flask_jwt_extended import JWTManager, get_jwt_identity, verify_jwt_in_request
from flask_jwt_extended.exceptions import JWTExtendedException
from jwt.exceptions import PyJWTError

__all__ = ["CachingJWTManager", "VERIFIED_TOKENS", "rate_key", "token_required", "verified"]

# Verified tokens remembered per process: a token and its claims take about 1.5 KB,
# so this is a few MB, and covers a worker's share of thousands of active citizens.
VERIFIED_TOKENS = 4096


class CachingJWTManager(JWTManager):
    """flask-jwt-extended's manager, remembering verified tokens (see the module docstring).

    It overrides the one method that decodes (``_decode_jwt_from_config``, private
    to flask-jwt-extended, hence its cap below 4.8 in pyproject.toml); everything after the decode
    (token type, freshness, the view's checks) still runs on every request.
    """

    def __init__(self, app: Any = None, add_context_processor: bool = False, *,
                 size: int = VERIFIED_TOKENS) -> None:
        super().__init__(app, add_context_processor)
        self._verified = lru_cache(maxsize=size)(self._verify)

    def verified_tokens(self) -> Any:
        """The cache's statistics (``functools`` ``CacheInfo``: hits, misses, currsize)."""
        return self._verified.cache_info()

    def _verify(self, encoded_token: str) -> dict:
        return super()._decode_jwt_from_config(encoded_token)

    def _decode_jwt_from_config(self, encoded_token: str, csrf_value: Any = None,
                                allow_expired: bool = False) -> dict:
        if csrf_value is not None or allow_expired or not isinstance(encoded_token, str):
            return super()._decode_jwt_from_config(encoded_token, csrf_value, allow_expired)
        claims = self._verified(encoded_token)
        exp = claims.get("exp")
        leeway = current_app.config.get("JWT_DECODE_LEEWAY", 0)
        if isinstance(leeway, timedelta):
            leeway = leeway.total_seconds()
        if not isinstance(exp, (int, float)) or time.time() >= int(exp) + leeway:
            # expired since it was verified (or never expires): verify again, which raises
            return super()._decode_jwt_from_config(encoded_token)
        return copy.deepcopy(claims)  # a view that changes its claims changes only its own



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
