"""Step files (si_agent.session.files): kept next to the sessions, shared by the
processes that share the sessions, encrypted outside the process, gone with the
flow or the TTL."""

from __future__ import annotations

import sqlite3
import time

import pytest
from cryptography.fernet import Fernet

from si_agent.session import RedisStore, SQLiteStore
from si_agent.session.files import (
    MemoryStepFiles,
    RedisStepFiles,
    SQLiteStepFiles,
    create_step_files,
    file_key,
)

PORTRAIT = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 40  # stands for an image


def test_put_get_drop(backend):
    files = create_step_files(backend.make(), file_key("secret"))
    files.put("s1:flow", "id_card_photo/portrait", PORTRAIT)
    files.put("s1:flow", "id_photo/photo", b"jpeg")
    files.put("s2:flow", "id_card_photo/portrait", b"other")
    assert files.get("s1:flow", "id_card_photo/portrait") == PORTRAIT
    assert files.get("s1:flow", "nothing") is None
    files.drop("s1:flow", ("id_photo/photo",))
    assert files.get("s1:flow", "id_photo/photo") is None
    assert files.get("s1:flow", "id_card_photo/portrait") == PORTRAIT
    files.drop("s1:flow")
    assert files.get("s1:flow", "id_card_photo/portrait") is None
    assert files.get("s2:flow", "id_card_photo/portrait") == b"other"


@pytest.mark.parametrize("kind", ["sqlite", pytest.param("redis", marks=pytest.mark.redis)])
def test_another_process_with_the_same_key_reads_them(kind, tmp_path, request):
    if kind == "sqlite":
        def make():
            return SQLiteStore(tmp_path / "sessions.db")
    else:
        url = request.getfixturevalue("redis_url")
        prefix = request.getfixturevalue("redis_prefix")

        def make():
            return RedisStore(url, prefix=prefix)
    key = file_key("the deployment's secret")
    first = create_step_files(make(), key)
    second = create_step_files(make(), key)  # a second worker
    first.put("s:f", "id_card_photo/portrait", PORTRAIT)
    assert second.get("s:f", "id_card_photo/portrait") == PORTRAIT
    stranger = create_step_files(make(), file_key("another secret"))
    assert stranger.get("s:f", "id_card_photo/portrait") is None


def test_files_are_encrypted_at_rest_in_sqlite(tmp_path):
    path = tmp_path / "sessions.db"
    key = Fernet.generate_key()
    SQLiteStepFiles(path, 1800, key).put("s:f", "id_card_photo/portrait", PORTRAIT)
    with sqlite3.connect(path) as conn:
        (blob,) = conn.execute("SELECT data FROM step_files").fetchone()
    assert PORTRAIT[:16] not in blob and not blob.startswith(b"\x89PNG")  # ciphertext
    assert Fernet(key).decrypt(blob) == PORTRAIT


@pytest.mark.redis
def test_files_are_encrypted_and_expire_in_redis(redis_client, redis_prefix):
    key = Fernet.generate_key()
    files = RedisStepFiles(redis_client, redis_prefix, 60, key)
    files.put("s:f", "id_card_photo/portrait", PORTRAIT)
    stored = redis_client.hget(redis_prefix + "s:f", "id_card_photo/portrait")
    assert PORTRAIT[:16] not in stored and Fernet(key).decrypt(stored) == PORTRAIT
    assert 0 < redis_client.ttl(redis_prefix + "s:f") <= 60


def test_files_expire_with_the_session_ttl(tmp_path):
    memory = MemoryStepFiles(ttl=0.05)
    memory.put("s:f", "a", b"x")
    sqlite = SQLiteStepFiles(tmp_path / "s.db", 1, Fernet.generate_key())
    sqlite.put("s:f", "a", b"x")
    assert memory.get("s:f", "a") == sqlite.get("s:f", "a") == b"x"
    time.sleep(1.1)
    assert memory.get("s:f", "a") is None
    assert sqlite.get("s:f", "a") is None


def test_the_key_is_derived_not_the_secret_itself():
    key = file_key("jwt-secret")
    assert key == file_key("jwt-secret") != file_key("jwt-secret2")
    assert Fernet(key)  # a valid Fernet key
    assert b"jwt-secret" not in key
