"""Revoking tokens before they expire: logout, session reset, refresh-token reuse.

Every token issued by ``POST /api/token`` belongs to a *family* (claim ``fam``, a
random id): the access and refresh token issued together, and every pair later
rotated from that refresh token. What is revoked goes into the denylist in the
session store's backend (``si_agent.session.denylist``), until the end of the
longest life of what it revokes, under one of two keys:

- ``jti:<jti>``: one token (its ``jti``; a token issued elsewhere without one is
  named by a digest of its claims), until its ``exp``;
- ``fam:<fam>``: every token of a family, until the longest life a token issued
  now could have (``SI_JWT_REFRESH_EXPIRES`` or ``SI_JWT_EXPIRES``).

A refresh token is used once: ``use_refresh`` lists ``used:<jti>``, and a second use
(a stolen copy, or the original after a thief used it) revokes its whole family,
so both the thief's and the citizen's tokens stop working and the citizen logs in
again. ``is_revoked`` runs on every request after the token is verified (also one
``CachingJWTManager`` remembers): one denylist lookup for both keys.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from typing import Any

from flask import current_app

from si_agent.config.settings import Settings
from si_agent.session.denylist import TokenDenylist

log = logging.getLogger(__name__)

__all__ = ["family_life", "is_revoked", "revoke_family", "revoke_token", "use_refresh"]


def _denylist() -> TokenDenylist:
    return current_app.config["SI_DENYLIST"]


def token_key(claims: dict[str, Any]) -> str:
    """The denylist key of one token."""
    jti = claims.get("jti")
    if isinstance(jti, str) and jti:
        return f"jti:{jti}"
    canonical = json.dumps(claims, sort_keys=True, separators=(",", ":"), default=str)
    return "claims:" + hashlib.sha256(canonical.encode()).hexdigest()[:32]


def _family(claims: dict[str, Any]) -> str | None:
    fam = claims.get("fam")
    return fam if isinstance(fam, str) and fam else None


def _expiry(claims: dict[str, Any]) -> float:
    exp = claims.get("exp")
    return float(exp) if isinstance(exp, (int, float)) else time.time() + family_life()


def family_life() -> int:
    """Seconds a family entry is kept: the longest life of a token issued now."""
    settings: Settings = current_app.config["SI_SETTINGS"]
    return max(settings.jwt_expires, settings.jwt_refresh_expires) + 60  # + clock skew


def is_revoked(claims: dict[str, Any]) -> bool:
    """Whether the token or its family was revoked (one lookup)."""
    fam = _family(claims)
    keys = (token_key(claims), f"fam:{fam}") if fam else (token_key(claims),)
    return _denylist().contains(*keys)


def revoke_token(claims: dict[str, Any]) -> None:
    """Revoke this one token until it expires."""
    _denylist().add(token_key(claims), _expiry(claims))


def revoke_family(claims: dict[str, Any]) -> bool:
    """Revoke every token of the token's family; False if it has none."""
    fam = _family(claims)
    if fam is None:
        return False
    _denylist().add(f"fam:{fam}", time.time() + family_life())
    return True


def use_refresh(claims: dict[str, Any]) -> bool:
    """Mark a refresh token used; False (and its family revoked) if it was used before."""
    jti = claims.get("jti")
    if not isinstance(jti, str) or not jti:
        return False
    if _denylist().add(f"used:{jti}", _expiry(claims)):
        return True
    revoke_family(claims)
    log.warning("refresh token reused: family %s revoked", (_family(claims) or "-")[:8])
    return False
