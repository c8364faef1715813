"""Settings from the environment: every variable, every invalid value, empty = unset."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import ValidationError

from si_agent.config.hours import OfficeHours
from si_agent.config.settings import DEV_JWT_SECRET, Settings, env_variable
from si_agent.errors import SettingsError

ROOT = Path(__file__).resolve().parents[2]
PEM = "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\n-----END PUBLIC KEY-----\n"

# variable, text, field, parsed value
PARSED = [
    ("SI_BUSINESS_DIR", "/srv/businesses", "business_dir", Path("/srv/businesses")),
    ("SI_DATA_DIR", "/var/lib/si", "data_dir", Path("/var/lib/si")),
    ("SI_SESSION_STORE", " Redis ", "session_store", "redis"),
    ("SI_REDIS_URL", "redis://cache:6380/2", "redis_url", "redis://cache:6380/2"),
    ("SI_REDIS_PREFIX", "tenant:", "redis_prefix", "tenant:"),
    ("SI_SESSION_TTL", "600", "session_ttl", 600),
    ("SI_SQLITE_PATH", "/tmp/s.db", "sqlite_path", Path("/tmp/s.db")),
    ("SI_ENGINE", "LLM", "engine", "llm"),
    ("SI_LLM_BASE_URL", "http://127.0.0.1:11434/v1", "llm_base_url", "http://127.0.0.1:11434/v1"),
    ("SI_LLM_API_KEY", "sk-test", "llm_api_key", "sk-test"),
    ("SI_LLM_MODEL", "qwen-plus", "llm_model", "qwen-plus"),
    ("SI_LLM_TIMEOUT", "2.5", "llm_timeout", 2.5),
    ("SI_LLM_TEMPERATURE", "0", "llm_temperature", 0.0),
    ("SI_LLM_MAX_RETRIES", "0", "llm_max_retries", 0),
    ("SI_LLM_EXTRACTION", "Per_Field", "llm_extraction", "per_field"),
    ("SI_MAX_MESSAGE_CHARS", "500", "max_message_chars", 500),
    ("SI_LOG_LEVEL", "debug", "log_level", "DEBUG"),
    ("SI_HANDOFF_TEXT", " 12333或0571-87654321 ", "handoff_text", "12333或0571-87654321"),
    ("SI_HANDOFF_HOURS", "always", "handoff_hours", OfficeHours.parse("always")),
    ("SI_HANDOFF_TIMEZONE", " Asia/Urumqi ", "handoff_timezone", "Asia/Urumqi"),
    ("SI_TURN_STORE", " SQLite ", "turn_store", "sqlite"),
    ("SI_TURN_RETENTION_DAYS", "30", "turn_retention_days", 30),
    ("SI_HANDOFF_CAPACITY", "5", "handoff_capacity", 5),
    ("SI_KNOWLEDGE", "NONE", "knowledge", "none"),
    ("SI_MODERATION", "OFF", "moderation", "off"),
    ("SI_ASR", "Local", "asr", "local"),
    ("SI_ASR_BASE_URL", "http://127.0.0.1:8000/v1", "asr_base_url", "http://127.0.0.1:8000/v1"),
    ("SI_ASR_API_KEY", "sk-asr", "asr_api_key", "sk-asr"),
    ("SI_ASR_MODEL", "paraformer-zh", "asr_model", "paraformer-zh"),
    ("SI_ASR_TIMEOUT", "12.5", "asr_timeout", 12.5),
    ("SI_ASR_MODEL_DIR", "/models/whisper", "asr_model_dir", Path("/models/whisper")),
    ("SI_ASR_THREADS", "4", "asr_threads", 4),
    ("SI_VOICE_MAX_BYTES", "1048576", "voice_max_bytes", 1048576),
    ("SI_VOICE_MAX_SECONDS", "30", "voice_max_seconds", 30),
    ("SI_MODERATION_URL", "http://moderation.internal/check", "moderation_url",
     "http://moderation.internal/check"),
    ("SI_MODERATION_TIMEOUT", "0.5", "moderation_timeout", 0.5),
    ("SI_MODERATION_FAIL", "closed", "moderation_fail", "closed"),
    ("SI_MILVUS_URI", "http://milvus:19530", "kb_uri", "http://milvus:19530"),
    ("SI_MILVUS_TOKEN", "root:Milvus", "kb_token", "root:Milvus"),
    ("SI_KB_COLLECTION", "kb2", "kb_collection", "kb2"),
    ("SI_KB_DIR", "/srv/kb", "kb_dir", Path("/srv/kb")),
    ("SI_EMBED_MODEL", "hashing", "embed_model", "hashing"),
    ("SI_AUTH_MODE", "Prod", "auth_mode", "prod"),
    ("SI_JWT_SECRET", "x" * 40, "jwt_secret", "x" * 40),
    ("SI_JWT_PUBLIC_KEY", PEM.replace("\n", "\\n"), "jwt_public_key", PEM),
    ("SI_JWT_ALGORITHM", "rs256", "jwt_algorithm", "RS256"),
    ("SI_JWT_EXPIRES", "60", "jwt_expires", 60),
    ("SI_JWT_ISSUER", "https://idp.example", "jwt_issuer", "https://idp.example"),
    ("SI_JWT_AUDIENCE", "si-agent", "jwt_audience", "si-agent"),
    ("SI_GATEWAY_CLIENTS", "portal:0123456789abcdef, app:fedcba9876543210xyz", "gateway_clients",
     (("portal", "0123456789abcdef"), ("app", "fedcba9876543210xyz"))),
    ("SI_JWT_KEYS", "k1:" + "a" * 32 + ",k2:" + "b" * 32, "jwt_keys",
     (("k1", "a" * 32), ("k2", "b" * 32))),
    ("SI_JWT_REFRESH_EXPIRES", "7200", "jwt_refresh_expires", 7200),
    ("SI_CORS_ORIGINS", "https://a.example", "cors_origins", ("https://a.example",)),
    ("SI_EMBED_ORIGINS", "https://www.hrss.example.gov.cn/, HTTP://M.Example:8080,"
     "https://www.hrss.example.gov.cn", "embed_origins",
     ("https://www.hrss.example.gov.cn", "http://m.example:8080")),
    ("SI_PROXY_HOPS", "1", "proxy_hops", 1),
    ("SI_RATE_LIMIT", "5 per second", "rate_limit", "5 per second"),
    ("SI_RATE_LIMIT_STORAGE", "redis://127.0.0.1:6379/1", "rate_limit_storage",
     "redis://127.0.0.1:6379/1"),
    ("SI_MAX_BODY_BYTES", "1024", "max_body_bytes", 1024),
    ("SI_UPLOAD_MAX_BYTES", "1048576", "upload_max_bytes", 1048576),
    ("SI_KB_UPLOAD_MAX_BYTES", "1048576", "kb_upload_max_bytes", 1048576),
    ("SI_UPLOAD_MAX_PIXELS", "12000000", "upload_max_pixels", 12_000_000),
    ("SI_UPLOAD_DECODES", "4", "upload_decodes", 4),
    ("SI_MAX_STREAMS", "6", "max_streams", 6),
    ("SI_UPLOAD_RETENTION_DAYS", "0", "upload_retention_days", 0),
    ("SI_UPLOAD_KEY", "k" * 44, "upload_key", "k" * 44),
    ("SI_FACE_VERIFIER", "Local", "face_verifier", "local"),
    ("SI_RPA_CHROMIUM", "/opt/chromium", "rpa_chromium", "/opt/chromium"),
    ("SI_JOB_BACKEND", "celery", "job_backend", "celery"),
    ("SI_CELERY_BROKER", "redis://h:6379/2", "celery_broker", "redis://h:6379/2"),
    ("SI_JOB_VISIBILITY_TIMEOUT", "7200", "job_visibility_timeout", 7200),
    ("SI_JOB_TAKEOVER_GRACE", "12.5", "job_takeover_grace", 12.5),
    ("SI_RPA_RETENTION_DAYS", "3", "rpa_retention_days", 3),
    ("SI_FACE_THRESHOLD", "0.5", "face_threshold", 0.5),
    ("SI_AUDIT_STORE", "Redis", "audit_store", "redis"),
    ("SI_AUDIT_RETENTION_DAYS", "30", "audit_retention_days", 30),
    ("SI_AUDIT_PEPPER", "q" * 32, "audit_pepper", "q" * 32),
    ("SI_CONSOLE_LOGIN_LIMIT", "5 per minute", "console_login_limit", "5 per minute"),
    ("SI_CONSOLE_SESSION_HOURS", "2", "console_session_hours", 2),
]

# variable, text, what the message says after the variable's name
INVALID = [
    ("SI_HANDOFF_HOURS", "weekdays 9-5", "office hours 'weekdays 9-5'"),
    ("SI_HANDOFF_TIMEZONE", "Mars/Olympus", "is not a time zone name"),
    ("SI_HANDOFF_CAPACITY", "0", "must be"),
    ("SI_SESSION_TTL", "abc", "must be a positive integer, got 'abc'"),
    ("SI_SESSION_TTL", "0", "must be a positive integer, got '0'"),
    ("SI_SESSION_TTL", "1.5", "must be a positive integer, got '1.5'"),
    ("SI_MAX_MESSAGE_CHARS", "-3", "must be a positive integer, got '-3'"),
    ("SI_JWT_EXPIRES", "soon", "must be a positive integer, got 'soon'"),
    ("SI_MAX_BODY_BYTES", "0", "must be a positive integer, got '0'"),
    ("SI_LLM_MAX_RETRIES", "-1", "must be a non-negative integer, got '-1'"),
    ("SI_LLM_MAX_RETRIES", "many", "must be a non-negative integer, got 'many'"),
    ("SI_LLM_TIMEOUT", "0", "must be a positive number, got '0'"),
    ("SI_LLM_TIMEOUT", "fast", "must be a positive number, got 'fast'"),
    ("SI_LLM_TIMEOUT", "inf", "must be a positive number, got 'inf'"),
    ("SI_LLM_TEMPERATURE", "-0.1", "must be a non-negative number, got '-0.1'"),
    ("SI_LLM_TEMPERATURE", "nan", "must be a non-negative number, got 'nan'"),
    ("SI_LLM_EXTRACTION", "batch", "must be one of turn, per_field, got 'batch'"),
    ("SI_KNOWLEDGE", "elastic", "must be one of milvus, none, got 'elastic'"),
    ("SI_MODERATION", "strict", "must be one of words, http, words+http, off"),
    ("SI_MODERATION_FAIL", "maybe", "must be one of open, closed, got 'maybe'"),
    ("SI_AUTH_MODE", "open", "must be one of dev, prod, got 'open'"),
    ("SI_JWT_ALGORITHM", "ES256", "must be one of HS256, RS256, got 'ES256'"),
    ("SI_LOG_LEVEL", "loud", "must be one of DEBUG, INFO, WARNING, ERROR, CRITICAL, got 'loud'"),
    ("SI_HANDOFF_TEXT", "   ", "must not be empty"),
    ("SI_AUDIT_RETENTION_DAYS", "0", "must be a positive integer, got '0'"),
    ("SI_CONSOLE_SESSION_HOURS", "0", "must be a positive integer, got '0'"),
    ("SI_PROXY_HOPS", "-1", "must be a non-negative integer, got '-1'"),
    ("SI_JOB_TAKEOVER_GRACE", "-1", "must be a non-negative number, got '-1'"),
    ("SI_JWT_PUBLIC_KEY", "/nowhere/key.pem",
     "is neither a PEM key nor a readable file: '/nowhere/key.pem'"),
    ("SI_GATEWAY_CLIENTS", "portal:short", "must be 'id:secret[,id:secret]'"),
    ("SI_GATEWAY_CLIENTS", "portal", "must be 'id:secret[,id:secret]'"),
    ("SI_GATEWAY_CLIENTS", ":0123456789abcdef", "must be 'id:secret[,id:secret]'"),
    ("SI_EMBED_ORIGINS", "*", "must be origins like https://app.example[:port]"),
    ("SI_EMBED_ORIGINS", "https://*.example.gov.cn", "must be origins like https://app.example"),
    ("SI_EMBED_ORIGINS", "www.example.gov.cn", "must be origins like https://app.example"),
    ("SI_EMBED_ORIGINS", "https://a.example/widget", "must be origins like https://app.example"),
    ("SI_EMBED_ORIGINS", "ftp://a.example", "must be origins like https://app.example"),
    ("SI_EMBED_ORIGINS", "https://a.example 'unsafe-inline'", "must be origins like"),
    ("SI_EMBED_ORIGINS", "https://a.example;script-src *", "must be origins like"),
    ("SI_EMBED_ORIGINS", "https://a.example:99999", "must be origins with a port in 1-65535, "
     "got 'https://a.example:99999'"),
    ("SI_EMBED_ORIGINS", "https://a.example:0", "must be origins with a port in 1-65535"),
    ("SI_CORS_ORIGINS", "https://a.example:70000", "must be origins with a port in 1-65535"),
]


@pytest.mark.parametrize(("variable", "text", "field", "value"), PARSED,
                         ids=[p[0] for p in PARSED])
def test_every_variable_is_parsed(variable, text, field, value):
    settings = Settings.from_env({variable: text})
    assert getattr(settings, field) == value
    assert env_variable(field) == variable
    # Nothing else changed.
    others = {k: v for k, v in dict(settings).items() if k != field}
    assert others == {k: v for k, v in dict(Settings()).items() if k != field}


def test_the_table_covers_every_setting():
    assert {p[2] for p in PARSED} == set(Settings.model_fields)


@pytest.mark.parametrize(("variable", "text", "message"), INVALID,
                         ids=[f"{i[0]}={i[1]}" for i in INVALID])
def test_every_invalid_value_names_its_variable(variable, text, message):
    with pytest.raises(SettingsError) as err:
        Settings.from_env({variable: text})
    assert str(err.value).startswith(f"{variable} {message}")
    assert isinstance(err.value, ValueError)


def test_kept_photos_need_a_key():
    with pytest.raises(SettingsError, match="SI_UPLOAD_KEY is required"):
        Settings.from_env({"SI_UPLOAD_RETENTION_DAYS": "7"})
    kept = Settings.from_env({"SI_UPLOAD_RETENTION_DAYS": "7", "SI_UPLOAD_KEY": "k" * 44})
    assert kept.upload_retention_days == 7 and "k" * 44 not in repr(kept)


def test_secrets_are_not_shown_in_a_bad_gateway_clients_message():
    with pytest.raises(SettingsError) as err:
        Settings.from_env({"SI_GATEWAY_CLIENTS": "portal:tooshortsecret"})
    assert "tooshortsecret" not in str(err.value)


def test_several_invalid_values_are_all_reported():
    with pytest.raises(SettingsError) as err:
        Settings.from_env({"SI_SESSION_TTL": "x", "SI_AUTH_MODE": "open"})
    assert "SI_SESSION_TTL must be" in str(err.value) and "SI_AUTH_MODE must be" in str(err.value)


def test_empty_means_unset():
    assert Settings.from_env({p[0]: "" for p in PARSED}) == Settings()


def test_only_si_variables_are_read():
    env = {"SESSION_TTL": "5", "si_session_ttl": "5", "SI_UNKNOWN_THING": "5",
           "SI_TEST_REDIS_URL": "redis://x", "KB_URI": "http://nope"}
    assert Settings.from_env(env) == Settings()


def test_settings_ignore_the_environment_unless_asked(monkeypatch, tmp_path):
    monkeypatch.setenv("SI_SESSION_TTL", "not a number")
    monkeypatch.setenv("SI_DATA_DIR", str(tmp_path))
    assert Settings().session_ttl == 1800 and Settings().data_dir == Path("data")
    with pytest.raises(SettingsError, match="SI_SESSION_TTL"):
        Settings.from_env()
    monkeypatch.setenv("SI_SESSION_TTL", "42")
    settings = Settings.from_env()
    assert settings.session_ttl == 42 and settings.data_dir == tmp_path


def test_defaults():
    s = Settings()
    assert s.session_store == "auto" and s.engine == "auto" and s.knowledge == "milvus"
    assert s.session_ttl == 1800 and s.llm_max_retries == 2 and s.llm_timeout == 20.0
    assert s.auth_mode == "dev" and s.jwt_secret == DEV_JWT_SECRET and s.jwt_algorithm == "HS256"
    assert s.gateway_clients == () and s.max_body_bytes == 64 * 1024
    assert s.kb_dir == ROOT / "rag" / "knowledge"


def test_derived_locations(tmp_path):
    s = Settings(data_dir=tmp_path)
    assert s.sessions_db == tmp_path / "sessions.db"
    assert s.kb_location == str(tmp_path / "kb.db")
    assert s.demo_backend_db == tmp_path / "demo_backend.db"
    s = s.replace(sqlite_path=tmp_path / "other.db", kb_uri="http://milvus:19530")
    assert s.sessions_db == tmp_path / "other.db" and s.kb_location == "http://milvus:19530"


def test_a_public_key_file_is_read(tmp_path):
    path = tmp_path / "idp.pem"
    path.write_text(PEM, encoding="utf-8")
    assert Settings.from_env({"SI_JWT_PUBLIC_KEY": str(path)}).jwt_public_key == PEM
    assert Settings.from_env({"SI_JWT_PUBLIC_KEY": PEM}).jwt_public_key == PEM
    path.write_text("not a key", encoding="utf-8")
    with pytest.raises(SettingsError, match="SI_JWT_PUBLIC_KEY names a file that holds no PEM"):
        Settings.from_env({"SI_JWT_PUBLIC_KEY": str(path)})
    with pytest.raises(SettingsError, match="SI_JWT_PUBLIC_KEY is neither a PEM key nor a"):
        Settings.from_env({"SI_JWT_PUBLIC_KEY": str(tmp_path)})  # a directory


def test_settings_are_immutable_and_replace_validates():
    s = Settings()
    with pytest.raises(ValidationError):
        s.session_ttl = 5
    changed = s.replace(session_ttl=5, auth_mode="PROD")
    assert changed.session_ttl == 5 and changed.auth_mode == "prod"
    assert s.session_ttl == 1800  # the original is untouched
    with pytest.raises(SettingsError, match="SI_SESSION_TTL must be a positive integer"):
        s.replace(session_ttl=0)
    with pytest.raises(SettingsError, match="unknown setting 'sesion_ttl'"):
        s.replace(sesion_ttl=5)
    with pytest.raises(SettingsError, match="SI_GATEWAY_CLIENTS"):
        s.replace(gateway_clients=(("portal", "short"),))
    with pytest.raises(SettingsError, match="SI_GATEWAY_CLIENTS"):
        s.replace(gateway_clients=5)


def test_constructor_arguments_are_validated_like_variables():
    with pytest.raises(SettingsError, match="SI_MAX_BODY_BYTES must be a positive integer"):
        Settings(max_body_bytes=-1)
    with pytest.raises(SettingsError, match="SI_LLM_MAX_RETRIES must be a non-negative integer"):
        Settings(llm_max_retries=True)
    assert Settings(llm_max_retries=5).llm_max_retries == 5


def test_secrets_stay_out_of_repr():
    s = Settings(llm_api_key="sk-secret", jwt_secret="j" * 40, kb_token="tok-secret",
                 gateway_clients=(("portal", "p" * 20),))
    shown = repr(s)
    assert "sk-secret" not in shown and "j" * 40 not in shown and "tok-secret" not in shown
    assert "p" * 20 not in shown


def test_every_variable_is_documented_in_env_example():
    documented = set(re.findall(r"^# (SI_[A-Z_]+)=", (ROOT / ".env.example").read_text("utf-8"),
                                re.M))
    assert {env_variable(name) for name in Settings.model_fields} <= documented


def test_the_command_refuses_an_invalid_variable_with_one_line():
    env = {**os.environ, "PYTHONPATH": str(ROOT), "SI_SESSION_TTL": "abc"}
    out = subprocess.run([sys.executable, "-m", "si_agent.cli", "validate"], capture_output=True,
                         text=True, timeout=60, cwd=ROOT, env=env)
    assert out.returncode == 2
    assert out.stderr == "error: SI_SESSION_TTL must be a positive integer, got 'abc'\n"
