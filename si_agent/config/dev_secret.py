"""The development signing secret: random per data directory, never a constant.

In ``SI_AUTH_MODE=dev`` with ``SI_JWT_SECRET`` unset, ``Settings.jwt_secret`` holds
the public placeholder ``DEV_JWT_SECRET``; anyone who read the source could sign an
admin token with it. ``with_dev_secret`` replaces it by the secret kept in
``SI_DATA_DIR/dev_jwt_secret``, made on first use (32 random bytes, URL-safe base64,
owner-only permissions). Every process on the same data directory (API workers,
job workers, the CLI) shares it, and it survives restarts, so tokens, expiry marks
and step-file keys derived from it stay valid; another data directory has another.

The file is written under a temporary name and linked into place, so two processes
starting at once agree on one secret and none reads a half-written file. Prod mode
never uses it (``si_agent.server.auth.check_production`` refuses the placeholder).
"""

from __future__ import annotations

import logging
import os
import secrets
import stat
from pathlib import Path

from si_agent.config.settings import DEV_JWT_SECRET, Settings
from si_agent.errors import SettingsError

log = logging.getLogger(__name__)

__all__ = ["DEV_SECRET_FILE", "dev_secret", "with_dev_secret"]

DEV_SECRET_FILE = "dev_jwt_secret"
_MIN_LENGTH = 32


def with_dev_secret(settings: Settings) -> Settings:
    """``settings`` with the data directory's secret in dev mode without ``SI_JWT_SECRET``."""
    if settings.auth_mode != "dev" or settings.jwt_secret != DEV_JWT_SECRET:
        return settings
    return settings.replace(jwt_secret=dev_secret(settings.data_dir))


def dev_secret(data_dir: Path) -> str:
    """The secret in ``data_dir/dev_jwt_secret``, made if missing; ``SettingsError`` if
    it cannot be read or made, or is too short."""
    path = Path(data_dir) / DEV_SECRET_FILE
    try:
        if not path.exists():
            _create(path)
        mode = stat.S_IMODE(path.stat().st_mode)
        if mode & 0o077:
            log.warning("%s was readable by others (mode %o): made owner-only", path, mode)
            path.chmod(0o600)
        secret = path.read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError) as exc:
        raise SettingsError(f"cannot read or create the development JWT secret {path}: {exc} "
                            "(set SI_JWT_SECRET, or fix SI_DATA_DIR)") from exc
    if len(secret) < _MIN_LENGTH:
        raise SettingsError(f"the development JWT secret in {path} is shorter than "
                            f"{_MIN_LENGTH} characters: delete the file to make a new one")
    return secret


def _create(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="ascii") as out:
            out.write(secrets.token_urlsafe(32) + "\n")
            out.flush()
            os.fsync(out.fileno())
        try:
            os.link(temporary, path)  # fails if another process made it first: theirs wins
            log.info("made a random development JWT secret in %s", path)
        except FileExistsError:
            pass
    finally:
        temporary.unlink(missing_ok=True)
