"""Every setting read from the environment, in one place (see ``.env.example``)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

DEV_JWT_SECRET = "si-agent-dev-secret-change-me-in-production"
AUTH_MODES = ("dev", "prod")
EXTRACTION_MODES = ("turn", "per_field")
KNOWLEDGE_BACKENDS = ("milvus", "none")
_REPO_ROOT = Path(__file__).resolve().parents[2]
_REPO_BUSINESSES = _REPO_ROOT / "businesses"


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
    engine: str = "auto"
    # -- model (any OpenAI-compatible endpoint) ---------------------------------
    llm_base_url: str | None = None
    llm_api_key: str | None = field(default=None, repr=False)
    llm_model: str = "deepseek-chat"
    llm_timeout: float = 20.0
    llm_max_retries: int = 2
    llm_temperature: float = 0.3
    llm_extraction: str = "turn"
    max_message_chars: int = 2000
    log_level: str = "INFO"
    # -- knowledge base (RAG) ------------------------------------------------
    knowledge: str = "milvus"
    kb_uri: str | None = None
    kb_token: str | None = field(default=None, repr=False)
    kb_collection: str = "si_knowledge"
    kb_dir: Path = _REPO_ROOT / "rag" / "knowledge"
    embed_model: str | None = None
    # -- HTTP API -----------------------------------------------------------
    auth_mode: str = "dev"
    jwt_secret: str = field(default=DEV_JWT_SECRET, repr=False)
    jwt_public_key: str | None = None
    jwt_algorithm: str = "HS256"
    jwt_expires: int = 3600
    jwt_issuer: str | None = None
    jwt_audience: str | None = None
    gateway_clients: tuple[tuple[str, str], ...] = field(default=(), repr=False)
    rate_limit: str = "60 per minute"
    rate_limit_storage: str = "memory://"
    max_body_bytes: int = 64 * 1024

    @property
    def sessions_db(self) -> Path:
        return self.sqlite_path or self.data_dir / "sessions.db"

    @property
    def kb_location(self) -> str:
        """Milvus URI: a server (``http://…``) or a Milvus Lite file (default data/kb.db)."""
        return self.kb_uri or str(self.data_dir / "kb.db")

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
        for key, name in (("SI_LLM_BASE_URL", "llm_base_url"), ("SI_LLM_API_KEY", "llm_api_key"),
                          ("SI_LLM_MODEL", "llm_model")):
            if key in pick:
                changes[name] = pick[key]
        if "SI_LLM_TIMEOUT" in pick:
            changes["llm_timeout"] = _positive_float("SI_LLM_TIMEOUT", pick["SI_LLM_TIMEOUT"])
        if "SI_LLM_MAX_RETRIES" in pick:
            raw = pick["SI_LLM_MAX_RETRIES"].strip()
            if not raw.isdigit():
                raise ValueError(f"SI_LLM_MAX_RETRIES must be a non-negative integer, got {raw!r}")
            changes["llm_max_retries"] = int(raw)
        if "SI_LLM_TEMPERATURE" in pick:
            changes["llm_temperature"] = _positive_float("SI_LLM_TEMPERATURE",
                                                         pick["SI_LLM_TEMPERATURE"], zero=True)
        if "SI_LLM_EXTRACTION" in pick:
            mode = pick["SI_LLM_EXTRACTION"].strip().lower()
            if mode not in EXTRACTION_MODES:
                raise ValueError(f"SI_LLM_EXTRACTION must be one of {', '.join(EXTRACTION_MODES)}")
            changes["llm_extraction"] = mode
        if "SI_MAX_MESSAGE_CHARS" in pick:
            changes["max_message_chars"] = _positive_int(
                "SI_MAX_MESSAGE_CHARS", pick["SI_MAX_MESSAGE_CHARS"]
            )
        if "SI_LOG_LEVEL" in pick:
            changes["log_level"] = pick["SI_LOG_LEVEL"].upper()
        for key, name in (("SI_MILVUS_URI", "kb_uri"), ("SI_MILVUS_TOKEN", "kb_token"),
                          ("SI_KB_COLLECTION", "kb_collection"), ("SI_EMBED_MODEL", "embed_model")):
            if key in pick:
                changes[name] = pick[key]
        if "SI_KNOWLEDGE" in pick:
            name = pick["SI_KNOWLEDGE"].strip().lower()
            if name not in KNOWLEDGE_BACKENDS:
                raise ValueError(
                    f"SI_KNOWLEDGE must be one of {', '.join(KNOWLEDGE_BACKENDS)}, got {name!r}")
            changes["knowledge"] = name
        if "SI_KB_DIR" in pick:
            changes["kb_dir"] = Path(pick["SI_KB_DIR"])
        if "SI_AUTH_MODE" in pick:
            mode = pick["SI_AUTH_MODE"].strip().lower()
            if mode not in AUTH_MODES:
                raise ValueError(f"SI_AUTH_MODE must be one of {', '.join(AUTH_MODES)}, got {mode!r}")
            changes["auth_mode"] = mode
        for key, name in (("SI_JWT_SECRET", "jwt_secret"), ("SI_JWT_ISSUER", "jwt_issuer"),
                          ("SI_JWT_AUDIENCE", "jwt_audience"),
                          ("SI_RATE_LIMIT", "rate_limit"),
                          ("SI_RATE_LIMIT_STORAGE", "rate_limit_storage")):
            if key in pick:
                changes[name] = pick[key]
        if "SI_JWT_PUBLIC_KEY" in pick:
            changes["jwt_public_key"] = _read_key(pick["SI_JWT_PUBLIC_KEY"])
        if "SI_JWT_ALGORITHM" in pick:
            alg = pick["SI_JWT_ALGORITHM"].strip().upper()
            if alg not in ("HS256", "RS256"):
                raise ValueError(f"SI_JWT_ALGORITHM must be HS256 or RS256, got {alg!r}")
            changes["jwt_algorithm"] = alg
        if "SI_JWT_EXPIRES" in pick:
            changes["jwt_expires"] = _positive_int("SI_JWT_EXPIRES", pick["SI_JWT_EXPIRES"])
        if "SI_MAX_BODY_BYTES" in pick:
            changes["max_body_bytes"] = _positive_int("SI_MAX_BODY_BYTES", pick["SI_MAX_BODY_BYTES"])
        if "SI_GATEWAY_CLIENTS" in pick:
            changes["gateway_clients"] = _clients(pick["SI_GATEWAY_CLIENTS"])
        return replace(s, **changes)


def _positive_int(name: str, raw: str) -> int:
    try:
        value = int(raw)
    except ValueError:
        raise ValueError(f"{name} must be a positive integer, got {raw!r}") from None
    if value <= 0:
        raise ValueError(f"{name} must be a positive integer, got {raw!r}")
    return value


def _positive_float(name: str, raw: str, zero: bool = False) -> float:
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(f"{name} must be a number, got {raw!r}") from None
    if value < 0 or (value == 0 and not zero):
        raise ValueError(f"{name} must be positive, got {raw!r}")
    return value


def _read_key(raw: str) -> str:
    """A PEM key given inline or as a path to a file."""
    if "-----BEGIN" in raw:
        return raw.replace("\\n", "\n")
    path = Path(raw)
    if not path.is_file():
        raise ValueError(f"SI_JWT_PUBLIC_KEY is neither a PEM key nor a readable file: {raw!r}")
    return path.read_text(encoding="utf-8")


def _clients(raw: str) -> tuple[tuple[str, str], ...]:
    """``id:secret,id2:secret2`` → pairs."""
    pairs = []
    for item in filter(None, (p.strip() for p in raw.split(","))):
        client_id, sep, secret = item.partition(":")
        if not sep or not client_id or len(secret) < 16:
            raise ValueError(
                "SI_GATEWAY_CLIENTS must be 'id:secret[,id:secret]' with secrets of 16+ characters"
            )
        pairs.append((client_id, secret))
    return tuple(pairs)
