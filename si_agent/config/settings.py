"""Every setting read from the environment, in one place (see ``.env.example``).

``Settings`` is an immutable pydantic-settings model:

- ``Settings()`` (or ``Settings(field=value, ...)``) uses the defaults and the
  arguments only: it never reads the environment, so tests get the same
  settings on every machine;
- ``Settings.from_env(env=None)`` reads the ``SI_*`` variables of ``env``
  (``os.environ`` by default); an empty variable counts as unset;
- ``settings.replace(field=value, ...)`` returns a validated copy.

Each field parses its own text (there is no JSON decoding of variables), and
every invalid value raises ``SettingsError`` naming the variable, e.g.
``SI_SESSION_TTL must be a positive integer, got 'abc'``; ``env_variable(field)``
gives a field's variable.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import (
    AliasChoices,
    BeforeValidator,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
)
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from si_agent.config.hours import OfficeHours
from si_agent.errors import SettingsError

DEV_JWT_SECRET = "si-agent-dev-secret-change-me-in-production"
AUTH_MODES = ("dev", "prod")
EXTRACTION_MODES = ("turn", "per_field")
KNOWLEDGE_BACKENDS = ("milvus", "none")
# Content moderation (si_agent.moderation): the staff word list, a moderation service
# by URL, both, or none.
MODERATION_CHOICES = ("words", "http", "words+http", "off")
JWT_ALGORITHMS = ("HS256", "RS256")
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
ENV_PREFIX = "SI_"
DEFAULT_HANDOFF = "12333社保服务热线"  # where citizens are sent for a person (人工 / 投诉)
# Seconds a job whose process died waits before another takes it over, so the dead
# attempt's requests still in flight (a portal holding a POST) land or die first.
DEFAULT_TAKEOVER_GRACE = 30.0
_REPO_ROOT = Path(__file__).resolve().parents[2]
_REPO_BUSINESSES = _REPO_ROOT / "businesses"
_MIN_CLIENT_SECRET = 16
_KID = re.compile(r"[A-Za-z0-9._-]{1,64}")
_ORIGIN = re.compile(r"https?://[A-Za-z0-9.-]+(?::([0-9]{1,5}))?")


def _default_business_dir() -> Path:
    local = Path("businesses")
    return local if local.is_dir() else _REPO_BUSINESSES


# -- value parsers: text from the environment, or an already typed value ----------
# Each raises ValueError with the part of the message after the variable's name.


def _integer(minimum: int, wording: str) -> Callable[[Any], int]:
    def parse(raw: Any) -> int:
        try:
            if isinstance(raw, bool) or not isinstance(raw, (int, str)):
                raise ValueError
            value = int(raw)
        except ValueError:
            raise ValueError(f"must be a {wording} integer, got {raw!r}") from None
        if value < minimum:
            raise ValueError(f"must be a {wording} integer, got {raw!r}")
        return value

    return parse


def _number(*, zero: bool) -> Callable[[Any], float]:
    wording = "non-negative" if zero else "positive"

    def parse(raw: Any) -> float:
        try:
            if isinstance(raw, bool) or not isinstance(raw, (int, float, str)):
                raise ValueError
            value = float(raw)
        except ValueError:
            raise ValueError(f"must be a {wording} number, got {raw!r}") from None
        if not math.isfinite(value) or value < 0 or (value == 0 and not zero):
            raise ValueError(f"must be a {wording} number, got {raw!r}")
        return value

    return parse


def _one_of(valid: Sequence[str], *, upper: bool = False) -> Callable[[Any], str]:
    def parse(raw: Any) -> str:
        value = str(raw).strip()
        value = value.upper() if upper else value.lower()
        if value not in valid:
            raise ValueError(f"must be one of {', '.join(valid)}, got {raw!r}")
        return value

    return parse


def _text(raw: Any) -> str:
    value = str(raw).strip()
    if not value:
        raise ValueError("must not be empty")
    return value


def _lower(raw: Any) -> Any:
    return raw.strip().lower() if isinstance(raw, str) else raw


def _pem_key(raw: Any) -> str | None:
    """A PEM key given inline (``\\n`` escapes allowed) or as the path of a file."""
    if raw is None:
        return None
    raw = str(raw)
    if "-----BEGIN" in raw:
        return raw.replace("\\n", "\n")
    try:
        text = Path(raw).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        raise ValueError(f"is neither a PEM key nor a readable file: {raw!r}") from None
    if "-----BEGIN" not in text:
        raise ValueError(f"names a file that holds no PEM key: {raw!r}")
    return text


def _clients(raw: Any) -> tuple[tuple[str, str], ...]:
    """``id:secret,id2:secret2`` (or pairs already split) → ``((id, secret), ...)``."""
    if isinstance(raw, str):
        items = [item.partition(":") for item in (p.strip() for p in raw.split(",")) if item]
        pairs = [(client_id, secret) if sep else ("", "") for client_id, sep, secret in items]
    else:
        try:
            pairs = [tuple(pair) for pair in raw]
        except TypeError:
            pairs = [()]
    for pair in pairs:
        if len(pair) != 2 or not pair[0] or len(pair[1]) < _MIN_CLIENT_SECRET:
            raise ValueError(
                "must be 'id:secret[,id:secret]' with secrets of "
                f"{_MIN_CLIENT_SECRET}+ characters"
            )
    return tuple((str(client_id), str(secret)) for client_id, secret in pairs)


def _jwt_keys(raw: Any) -> tuple[tuple[str, str], ...]:
    """``kid:key,kid2:key2`` (or pairs) → ``((kid, key), ...)``; a key is an HS256 secret or a
    PEM public key / its file (RS256, read in ``Settings``). Keys are never quoted in errors."""
    if isinstance(raw, str):
        pairs = [(kid.strip(), key.strip()) if sep else ("", "")
                 for kid, sep, key in (p.strip().partition(":") for p in raw.split(",") if p.strip())]
    else:
        try:
            pairs = [tuple(pair) for pair in raw]
        except TypeError:
            pairs = [()]
    kids = [pair[0] if len(pair) == 2 else "" for pair in pairs]
    if any(len(pair) != 2 or not _KID.fullmatch(str(pair[0])) or not pair[1] for pair in pairs):
        raise ValueError("must be 'kid:key[,kid:key]' with kids of letters, digits, . _ -")
    if len(set(kids)) != len(kids):
        raise ValueError("names a kid twice")
    return tuple((str(kid), str(key)) for kid, key in pairs)


def _origins(raw: Any) -> tuple[str, ...]:
    """``https://a.example,https://b.example:8443`` → exact origins (``scheme://host[:port]``:
    http or https, no path, no ``*``, a port in 1-65535), in lower case, each once."""
    items = [p.strip() for p in raw.split(",")] if isinstance(raw, str) else [str(p) for p in raw]
    origins: list[str] = []
    for origin in (item.rstrip("/").lower() for item in items if item):
        match = _ORIGIN.fullmatch(origin)
        if not match:
            raise ValueError("must be origins like https://app.example[:port] (scheme://host"
                             f"[:port], http or https, no path, no *), got {origin!r}")
        if match.group(1) is not None and not 1 <= int(match.group(1)) <= 65535:
            raise ValueError(f"must be origins with a port in 1-65535, got {origin!r}")
        if origin not in origins:
            origins.append(origin)
    return tuple(origins)


PositiveInt = Annotated[int, BeforeValidator(_integer(1, "positive"))]
NonNegativeInt = Annotated[int, BeforeValidator(_integer(0, "non-negative"))]
PositiveFloat = Annotated[float, BeforeValidator(_number(zero=False))]
NonNegativeFloat = Annotated[float, BeforeValidator(_number(zero=True))]
Lowered = Annotated[str, BeforeValidator(_lower)]
Text = Annotated[str, BeforeValidator(_text)]


def _hours(raw: Any) -> Any:
    return OfficeHours.parse(raw) if isinstance(raw, str) else raw


def _zone(raw: Any) -> Any:
    if isinstance(raw, str):
        try:
            ZoneInfo(raw.strip())
        except (ValueError, ZoneInfoNotFoundError):
            raise ValueError(f"is not a time zone name (like Asia/Shanghai): {raw!r}") from None
        return raw.strip()
    return raw


OfficeHoursSetting = Annotated[OfficeHours, BeforeValidator(_hours)]
TimeZoneName = Annotated[str, BeforeValidator(_zone)]
ExtractionMode = Annotated[str, BeforeValidator(_one_of(EXTRACTION_MODES))]
LogLevel = Annotated[str, BeforeValidator(_one_of(LOG_LEVELS, upper=True))]
KnowledgeBackend = Annotated[str, BeforeValidator(_one_of(KNOWLEDGE_BACKENDS))]
ModerationChoice = Annotated[str, BeforeValidator(_one_of(MODERATION_CHOICES))]
ModerationFail = Annotated[str, BeforeValidator(_one_of(("open", "closed")))]
AuthMode = Annotated[str, BeforeValidator(_one_of(AUTH_MODES))]
JwtAlgorithm = Annotated[str, BeforeValidator(_one_of(JWT_ALGORITHMS, upper=True))]
PemKey = Annotated[str | None, BeforeValidator(_pem_key)]
JwtKeys = Annotated[tuple[tuple[str, str], ...], BeforeValidator(_jwt_keys)]
Origins = Annotated[tuple[str, ...], BeforeValidator(_origins)]  # browser origins
GatewayClients = Annotated[tuple[tuple[str, str], ...], BeforeValidator(_clients)]


# Fields whose variable is not SI_ + the field's name.
_ALIASES = {"kb_uri": "SI_MILVUS_URI", "kb_token": "SI_MILVUS_TOKEN"}


def env_variable(name: str) -> str:
    """The variable that sets field ``name``: ``SI_SESSION_TTL``, ``SI_MILVUS_URI`` for kb_uri."""
    return _ALIASES.get(name, f"{ENV_PREFIX}{name.upper()}")


class Settings(BaseSettings):
    """Runtime settings; ``Settings.from_env()`` in programs, ``Settings(...)`` in tests."""

    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX, env_ignore_empty=True, case_sensitive=False, frozen=True,
        extra="forbid",
    )

    business_dir: Path = Field(default_factory=_default_business_dir)
    data_dir: Path = Path("data")
    session_store: Lowered = "auto"
    redis_url: str = "redis://127.0.0.1:6379/0"
    redis_prefix: str = "si_agent:session:"
    session_ttl: PositiveInt = 1800
    sqlite_path: Path | None = None
    engine: Lowered = "auto"
    # -- model (any OpenAI-compatible endpoint) ---------------------------------
    llm_base_url: str | None = None
    llm_api_key: str | None = Field(default=None, repr=False)
    llm_model: str = "deepseek-chat"
    llm_timeout: PositiveFloat = 20.0
    llm_temperature: NonNegativeFloat = 0.3
    llm_max_retries: NonNegativeInt = 2
    llm_extraction: ExtractionMode = "turn"
    max_message_chars: PositiveInt = 2000
    log_level: LogLevel = "INFO"
    # Who citizens are sent to for a person (人工 / 投诉): fills {handoff} in the
    # assistant texts' handoff text.
    handoff_text: Text = DEFAULT_HANDOFF
    # When people answer hand-offs on the page (docs/handoff.md): "mon-fri 09:00-17:00",
    # rules separated by ";", or "always" / "never"; in handoff_timezone.
    handoff_hours: OfficeHoursSetting = OfficeHours.parse("mon-fri 09:00-17:00")
    handoff_timezone: TimeZoneName = "Asia/Shanghai"
    # Open tickets one staff member at the queue is counted on for; beyond it the
    # citizen gets the contact text and the ticket number, not a promise.
    handoff_capacity: PositiveInt = 3
    # -- content moderation (docs/moderation.md) -------------------------------
    moderation: ModerationChoice = "words"
    moderation_url: str | None = None  # the moderation service (SI_MODERATION=http)
    moderation_timeout: PositiveFloat = 2.0
    moderation_fail: ModerationFail = "open"  # when the service fails: let through, refuse
    # -- knowledge base (RAG) ------------------------------------------------
    knowledge: KnowledgeBackend = "milvus"
    kb_uri: str | None = Field(default=None,
                               validation_alias=AliasChoices("kb_uri", _ALIASES["kb_uri"]))
    kb_token: str | None = Field(default=None, repr=False,
                                 validation_alias=AliasChoices("kb_token", _ALIASES["kb_token"]))
    kb_collection: str = "si_knowledge"
    kb_dir: Path = _REPO_ROOT / "rag" / "knowledge"
    embed_model: str | None = None
    # -- HTTP API -----------------------------------------------------------
    auth_mode: AuthMode = "dev"
    jwt_secret: str = Field(default=DEV_JWT_SECRET, repr=False)
    jwt_public_key: PemKey = None
    jwt_algorithm: JwtAlgorithm = "HS256"
    jwt_expires: PositiveInt = 3600
    jwt_issuer: str | None = None
    jwt_audience: str | None = None
    gateway_clients: GatewayClients = Field(default=(), repr=False)
    # Key rotation (docs/security.md): several keys by kid; they replace jwt_secret /
    # jwt_public_key. The first key signs the tokens issued here.
    jwt_keys: JwtKeys = Field(default=(), repr=False)
    jwt_refresh_expires: PositiveInt = 86400  # lifetime of refresh tokens from /api/token
    cors_origins: Origins = ()  # browser origins allowed to call /api/* (none: CORS off)
    # Sites allowed to show the chat page in a frame (the widget, /widget.js): the
    # page's CSP frame-ancestors; none: no site may frame it (docs/deploy.md).
    embed_origins: Origins = ()
    # Reverse proxies in front of the app (nginx: 1) whose X-Forwarded-For/-Proto to
    # trust, so limits count per client, not per proxy; 0 trusts none (a client could
    # forge them).
    proxy_hops: NonNegativeInt = 0
    rate_limit: str = "60 per minute"
    rate_limit_storage: str = "memory://"
    max_body_bytes: PositiveInt = 64 * 1024
    # -- photo uploads (POST /api/upload) ------------------------------------
    upload_max_bytes: PositiveInt = 8 * 2**20
    # -- knowledge documents staff upload in the console (/console/documents) --
    kb_upload_max_bytes: PositiveInt = 50 * 2**20
    # A 12 MP phone photo (4032x3024, 4080x3060) fits; an ID card needs far less.
    upload_max_pixels: PositiveInt = 12_500_000
    upload_decodes: PositiveInt = 2  # photos decoded at once per process (others: 503)
    # Live event streams (a page following a submission or a hand-off ticket) at once per
    # process, each holding a thread; beyond it a page polls (si_agent.server.streams).
    # Keep it below gunicorn's --threads (8 by default) to leave threads for requests.
    max_streams: PositiveInt = 4
    # Days a checked photo is kept after its step, encrypted with upload_key; 0 keeps none.
    upload_retention_days: NonNegativeInt = 0
    upload_key: str | None = Field(default=None, repr=False)  # a Fernet key (urlsafe base64)
    # -- jobs: where long-running submissions run ----------------------------------
    job_backend: Literal["thread", "celery"] = "thread"
    celery_broker: str | None = None  # default: redis_url
    # Seconds before Redis hands an unacknowledged job to another worker: above the
    # longest job (si_agent/jobs/celery.py).
    job_visibility_timeout: PositiveInt = 3600
    # Seconds between finding a job's process dead and taking the job over
    # (si_agent/jobs/model.py; docs/faults.md); 0 takes it over at once.
    job_takeover_grace: NonNegativeFloat = DEFAULT_TAKEOVER_GRACE
    # -- audit log (docs/audit.md) -------------------------------------------------
    audit_store: Lowered = "auto"  # auto, sqlite, redis, memory (si_agent.audit)
    audit_retention_days: PositiveInt = 180
    # Key of the HMAC that hashes user ids in the audit log; default: jwt_secret.
    audit_pepper: str | None = Field(default=None, repr=False)
    # -- turn-event record (conversation review, feedback; si_agent.turns) ---------
    turn_store: Lowered = "auto"  # auto, sqlite, redis, memory
    turn_retention_days: PositiveInt = 90
    # -- staff console (/console, docs/console.md) ----------------------------------
    # Sign-in attempts per client address and per account name (limits syntax).
    console_login_limit: str = "10 per 5 minutes"
    console_session_hours: PositiveInt = 8  # a console sign-in lasts at most this long
    # -- rpa executor (api.kind: rpa) ---------------------------------------------
    rpa_chromium: str = "/usr/bin/chromium"
    rpa_retention_days: NonNegativeInt = 7  # job traces (screenshots hold personal data)
    # -- photo steps ------------------------------------------------------------
    face_verifier: Lowered = "local"  # a name in si_agent.photo.face.VERIFIERS
    # SFace cosine at or above which two faces are the same person (local verifier).
    face_threshold: float = Field(default=0.363, ge=-1.0, le=1.0)
    # -- voice input (POST /api/voice; si_agent/voice) ----------------------------
    asr: Lowered = "auto"  # a name in si_agent.voice.RECOGNIZERS
    asr_base_url: str | None = None  # an OpenAI-compatible endpoint (SI_ASR=openai)
    asr_api_key: str | None = Field(default=None, repr=False)
    asr_model: str = "whisper-1"  # the model name sent to that endpoint
    asr_timeout: PositiveFloat = 30.0
    # A CTranslate2 Whisper directory for SI_ASR=local; default: the packaged weights.
    asr_model_dir: Path | None = None
    asr_threads: PositiveInt = 2  # CPU threads of the local recogniser
    voice_max_bytes: PositiveInt = 2 * 2**20
    voice_max_seconds: PositiveInt = 60

    @field_validator("jwt_keys")
    @classmethod
    def _public_keys(cls, keys: tuple[tuple[str, str], ...], info: ValidationInfo):
        """With RS256 every key is a PEM public key (inline or a file), read once here."""
        if info.data.get("jwt_algorithm") != "RS256":
            return keys
        try:
            return tuple((kid, _pem_key(key)) for kid, key in keys)
        except ValueError:
            raise ValueError("with RS256 needs kid:PEM-public-key or kid:/path/to/key.pem "
                             "for every key") from None

    def __init__(self, **values: Any) -> None:
        try:
            super().__init__(**values)
        except ValidationError as exc:
            raise SettingsError(_describe(exc)) from None
        if "http" in self.moderation and not self.moderation_url:
            raise SettingsError(f"SI_MODERATION={self.moderation} needs SI_MODERATION_URL "
                                "(the moderation service's address)")
        if self.upload_retention_days and not self.upload_key:
            raise SettingsError("SI_UPLOAD_KEY is required when SI_UPLOAD_RETENTION_DAYS > 0 "
                                "(kept photos are encrypted at rest)")

    @classmethod
    def settings_customise_sources(cls, settings_cls, init_settings, env_settings,
                                   dotenv_settings, file_secret_settings):
        """Only the constructor's arguments: ``from_env`` is the one reader of the environment."""
        return (init_settings,)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        """Read the ``SI_*`` variables of ``env`` (default ``os.environ``); unset ones keep their defaults."""
        source = _EnvironSource(cls, os.environ if env is None else env)
        return cls(**source())

    def replace(self, **changes: Any) -> Settings:
        """A copy with ``changes`` applied, validated like everything else (settings are immutable).

        Fields left at their defaults stay unset in the copy (``model_fields_set``), so
        "was this configured?" reads the same on a copy (``SI_REDIS_URL`` for ``auto``).
        """
        kept = {name: getattr(self, name) for name in self.model_fields_set}
        return type(self)(**{**kept, **changes})

    @property
    def sessions_db(self) -> Path:
        return self.sqlite_path or self.data_dir / "sessions.db"

    @property
    def audit_db(self) -> Path:
        return self.data_dir / "audit.db"

    @property
    def turns_db(self) -> Path:
        """The turn-event record (``si_agent.turns``), next to the audit log."""
        return self.data_dir / "turns.db"

    @property
    def staff_db(self) -> Path:
        """The staff console's local accounts and sign-in sessions (``si_agent.staff``)."""
        return self.data_dir / "staff.db"

    @property
    def curated_db(self) -> Path:
        """Curated answers when sessions are in SQLite (``si_agent.curated``)."""
        return self.data_dir / "curated.db"

    @property
    def kb_location(self) -> str:
        """Milvus URI: a server (``http://…``) or a Milvus Lite file (default data/kb.db)."""
        return self.kb_uri or str(self.data_dir / "kb.db")

    @property
    def documents_dir(self) -> Path:
        """The knowledge documents staff upload in the console (``rag.library``)."""
        return self.data_dir / "documents"

    @property
    def uploads_dir(self) -> Path:
        return self.data_dir / "uploads"

    @property
    def demo_backend_db(self) -> Path:
        return self.data_dir / "demo_backend.db"

    @property
    def demo_portal_db(self) -> Path:
        return self.data_dir / "demo_portal.db"


class _EnvironSource(PydanticBaseSettingsSource):
    """A settings source (pydantic-settings' public extension point) over a given
    mapping of ``SI_*`` variables.

    Each field is read from its variable (``env_variable``), matched
    case-insensitively after the ``SI_`` prefix; an empty value is unset. Values
    stay text: each field's validator parses its own (no JSON decoding).
    """

    def __init__(self, settings_cls: type[BaseSettings], environ: Mapping[str, str]) -> None:
        super().__init__(settings_cls)
        self._environ = {k.lower(): v for k, v in environ.items()
                         if k.startswith(ENV_PREFIX) and v != ""}

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        """The field's raw text (None if unset), the key it is passed under, not complex."""
        return self._environ.get(env_variable(field_name).lower()), field_name, False

    def __call__(self) -> dict[str, Any]:
        found: dict[str, Any] = {}
        for name, field in self.settings_cls.model_fields.items():
            value, key, _ = self.get_field_value(field, name)
            if value is not None:
                found[key] = value
        return found


def _describe(exc: ValidationError) -> str:
    """``SI_X must be ...; SI_Y ...``: each problem named by its variable."""
    fields = Settings.model_fields
    by_alias = {alias.lower(): name for name, alias in _ALIASES.items()}
    problems = []
    for error in exc.errors():
        key = str(error["loc"][0]) if error["loc"] else ""
        name = by_alias.get(key.lower(), key)
        cause = (error.get("ctx") or {}).get("error")
        if name not in fields:
            problems.append(f"unknown setting {key!r}")
        elif isinstance(cause, ValueError):  # our parsers' wording: "must be ..., got ..."
            problems.append(f"{env_variable(name)} {cause}")
        else:
            problems.append(f"{env_variable(name)} is invalid: {error['msg']}")
    return "; ".join(problems)
