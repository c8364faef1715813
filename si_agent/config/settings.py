"""Every setting read from the environment, in one place (see ``.env.example``)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

_REPO_BUSINESSES = Path(__file__).resolve().parents[2] / "businesses"


def _default_business_dir() -> Path:
    local = Path("businesses")
    return local if local.is_dir() else _REPO_BUSINESSES


@dataclass(frozen=True)
class Settings:
    """Runtime settings; build with ``Settings.from_env()`` or directly in tests."""

    business_dir: Path = field(default_factory=_default_business_dir)
    data_dir: Path = Path("data")
    session_store: str = "auto"
    redis_url: str = "redis://127.0.0.1:6379/0"
    redis_prefix: str = "si_agent:session:"
    session_ttl: int = 1800
    sqlite_path: Path | None = None
    engine: str = "rules"
    max_message_chars: int = 2000
    log_level: str = "INFO"

    @property
    def sessions_db(self) -> Path:
        return self.sqlite_path or self.data_dir / "sessions.db"

    @property
    def demo_backend_db(self) -> Path:
        return self.data_dir / "demo_backend.db"

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        """Read ``SI_*`` variables; unset ones keep their defaults."""
        env = os.environ if env is None else env
        s = cls()
        pick = {k: v for k, v in env.items() if k.startswith("SI_") and v != ""}
        changes: dict = {}
        if "SI_BUSINESS_DIR" in pick:
            changes["business_dir"] = Path(pick["SI_BUSINESS_DIR"])
        if "SI_DATA_DIR" in pick:
            changes["data_dir"] = Path(pick["SI_DATA_DIR"])
        if "SI_SESSION_STORE" in pick:
            changes["session_store"] = pick["SI_SESSION_STORE"].strip().lower()
        if "SI_REDIS_URL" in pick:
            changes["redis_url"] = pick["SI_REDIS_URL"]
        if "SI_REDIS_PREFIX" in pick:
            changes["redis_prefix"] = pick["SI_REDIS_PREFIX"]
        if "SI_SESSION_TTL" in pick:
            changes["session_ttl"] = _positive_int("SI_SESSION_TTL", pick["SI_SESSION_TTL"])
        if "SI_SQLITE_PATH" in pick:
            changes["sqlite_path"] = Path(pick["SI_SQLITE_PATH"])
        if "SI_ENGINE" in pick:
            changes["engine"] = pick["SI_ENGINE"].strip().lower()
        if "SI_MAX_MESSAGE_CHARS" in pick:
            changes["max_message_chars"] = _positive_int(
                "SI_MAX_MESSAGE_CHARS", pick["SI_MAX_MESSAGE_CHARS"]
            )
        if "SI_LOG_LEVEL" in pick:
            changes["log_level"] = pick["SI_LOG_LEVEL"].upper()
        return replace(s, **changes)


def _positive_int(name: str, raw: str) -> int:
    try:
        value = int(raw)
    except ValueError:
        raise ValueError(f"{name} must be a positive integer, got {raw!r}") from None
    if value <= 0:
        raise ValueError(f"{name} must be a positive integer, got {raw!r}")
    return value
