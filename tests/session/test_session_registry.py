"""create_store: choosing a backend by name, the auto fallback, unknown names."""

from __future__ import annotations

import logging
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from si_agent.config.settings import Settings
from si_agent.errors import StoreUnavailable, UnknownBackendError
from si_agent.session import (
    STORES,
    MemoryStore,
    RedisStore,
    SessionStore,
    SQLiteStore,
    create_store,
    registry,
)
from si_agent.session.base import expiry_mark
from si_agent.session.model import Session
from si_agent.session.registry import _FACTORIES, mark_key
from si_agent.testing.processes import RedisServer

UNREACHABLE = "redis://:hunter2@127.0.0.1:1/0"


def test_store_names_match_the_registry():
    assert STORES == ("memory", "sqlite", "redis", "auto")
    assert tuple(_FACTORIES) == STORES


def test_memory_by_name():
    store = create_store(Settings(session_store="memory", session_ttl=42))
    assert isinstance(store, MemoryStore)
    assert store.ttl == 42


def test_sqlite_by_name_creates_the_file(tmp_path):
    settings = Settings(session_store="SQLite", data_dir=tmp_path / "data", session_ttl=60)
    store = create_store(settings)
    assert isinstance(store, SQLiteStore)
    assert store.path == tmp_path / "data" / "sessions.db"
    assert store.path.is_file()
    assert store.ttl == 60


def test_sqlite_uses_the_explicit_path(tmp_path):
    settings = Settings(session_store="sqlite", sqlite_path=tmp_path / "x" / "s.db")
    assert create_store(settings).path == tmp_path / "x" / "s.db"


@pytest.mark.redis
def test_redis_by_name(redis_url, redis_prefix, redis_client):
    settings = Settings(
        session_store="redis", redis_url=redis_url, redis_prefix=redis_prefix, session_ttl=77
    )
    store = create_store(settings)
    assert isinstance(store, RedisStore)
    store.save(Session(session_id="abc"))
    assert redis_client.exists(redis_prefix + "abc")
    assert 0 < redis_client.ttl(redis_prefix + "abc") <= 77
    store.close()


@pytest.mark.redis
def test_auto_picks_redis_when_it_answers(redis_url, redis_prefix, tmp_path, caplog):
    settings = Settings(
        session_store="auto", redis_url=redis_url, redis_prefix=redis_prefix, data_dir=tmp_path
    )
    with caplog.at_level(logging.INFO, logger="si_agent.session"):
        store = create_store(settings)
    assert isinstance(store, RedisStore)
    assert "using redis" in caplog.text
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert not (tmp_path / "sessions.db").exists()
    store.close()


def test_auto_without_a_redis_url_falls_back_to_sqlite_with_a_warning(tmp_path, caplog):
    # SI_REDIS_URL unset on a machine whose default local Redis does not answer (here the
    # default is replaced by an unreachable address, as unset: not in model_fields_set).
    settings = Settings.model_construct(
        _fields_set={"session_store", "data_dir"}, **{
            **dict(Settings(data_dir=tmp_path)), "session_store": "auto",
            "redis_url": UNREACHABLE})
    assert "redis_url" not in settings.model_fields_set
    started = time.monotonic()
    with caplog.at_level(logging.WARNING, logger="si_agent.session"):
        store = create_store(settings)
    assert time.monotonic() - started < 2
    assert isinstance(store, SQLiteStore)
    assert store.path == tmp_path / "sessions.db"
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1
    assert "sqlite" in warnings[0] and str(store.path) in warnings[0]
    assert "SI_REDIS_URL is not set" in warnings[0]
    assert "127.0.0.1:1" in warnings[0] and "did not answer PING" in warnings[0]
    assert "hunter2" not in caplog.text


def test_auto_with_a_redis_url_that_stays_down_fails_loudly(tmp_path, monkeypatch, caplog):
    monkeypatch.setattr(registry, "AUTO_WAIT", 1.5)
    settings = Settings.from_env({"SI_SESSION_STORE": "auto", "SI_REDIS_URL": UNREACHABLE,
                                  "SI_DATA_DIR": str(tmp_path)})
    started = time.monotonic()
    with caplog.at_level(logging.WARNING, logger="si_agent.session"), \
            pytest.raises(StoreUnavailable) as caught:
        create_store(settings)
    waited = time.monotonic() - started
    assert 1.0 <= waited < 6
    message = str(caught.value)
    assert "SI_REDIS_URL is set" in message and "127.0.0.1:1" in message
    assert "hunter2" not in message and "hunter2" not in caplog.text
    assert not (tmp_path / "sessions.db").exists()  # no silent SQLite of its own
    # A copy of the settings still has the URL configured, and the default stays unset.
    assert "redis_url" in settings.replace(session_ttl=60).model_fields_set
    assert "redis_url" not in Settings().replace(session_store="auto").model_fields_set


def test_auto_waits_for_a_configured_redis_that_starts_late(tmp_path):
    redis = RedisServer(tmp_path, persist=False)
    settings = Settings(session_store="auto", redis_url=redis.url, data_dir=tmp_path,
                        redis_prefix="si-test-late:")
    starter = threading.Timer(1.0, redis.start)
    starter.start()
    try:
        store = create_store(settings)
        assert isinstance(store, RedisStore)
        store.save(Session(session_id="abc"))
        assert redis.client().exists("si-test-late:abc")
        store.close()
        assert not (tmp_path / "sessions.db").exists()
    finally:
        starter.join(timeout=70)
        redis.close()


def test_auto_with_a_malformed_redis_url_fails_loudly(tmp_path):
    settings = Settings(session_store="auto", redis_url="http://nope", data_dir=tmp_path)
    with pytest.raises(ValueError):
        create_store(settings)


def test_unknown_name_lists_the_valid_ones():
    with pytest.raises(UnknownBackendError) as caught:
        create_store(Settings(session_store="postgres"))
    assert isinstance(caught.value, LookupError)
    assert caught.value.kind == "session store"
    assert caught.value.name == "postgres"
    assert caught.value.valid == sorted(STORES)
    assert "valid names: auto, memory, redis, sqlite" in str(caught.value)


def test_every_created_store_satisfies_the_protocol(tmp_path):
    for name in ("memory", "sqlite"):
        store = create_store(Settings(session_store=name, data_dir=tmp_path))
        assert isinstance(store, SessionStore)


def test_importing_the_package_does_not_import_redis():
    code = "import sys; import si_agent.session; sys.exit(1 if 'redis' in sys.modules else 0)"
    root = Path(__file__).resolve().parents[2]
    result = subprocess.run([sys.executable, "-c", code], cwd=root, check=False)
    assert result.returncode == 0


def test_expiry_marks_are_keyed_with_a_deployment_secret(tmp_path):
    # The mark of a user id (often a phone number) is an HMAC: a guessed id cannot be
    # tested against the marks in the store without the deployment's secret.
    phone = "13800138000"

    def marks(pepper: str) -> set[str]:
        store = create_store(Settings(session_store="sqlite", data_dir=tmp_path / pepper,
                                      audit_pepper=pepper))
        store.save(Session(session_id=phone))
        with sqlite3.connect(store.path) as conn:
            return {mark for (mark,) in conn.execute("SELECT mark FROM expiry_marks")}

    one, other = marks("a" * 32), marks("b" * 32)
    assert one and other and one != other
    assert expiry_mark(phone) not in one | other  # not the unkeyed digest
    assert one == {expiry_mark(phone, mark_key(Settings(audit_pepper="a" * 32)))}

    store = create_store(Settings(session_store="memory", audit_pepper="a" * 32))
    store.save(Session(session_id=phone))
    assert set(store._marks) == one  # every store keys its marks the same way
    store._records.clear()  # the session ends; its keyed mark tells the expiry once
    assert store.expired(phone) is True and store.expired(phone) is False
