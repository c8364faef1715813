"""RedisStore specifics: key layout, TTL, odd records, an unreachable server, URL masking."""

from __future__ import annotations

import time

import pytest

from si_agent.errors import StoreUnavailable
from si_agent.session import RedisStore
from si_agent.session.base import prepare_save
from si_agent.session.model import Session
from si_agent.session.redis import mask_url

UNREACHABLE = "redis://admin:hunter2@127.0.0.1:1/0"


@pytest.mark.parametrize(
    ("url", "masked"),
    [
        ("redis://127.0.0.1:6379/0", "redis://127.0.0.1:6379/0"),
        ("redis://:s3cret@host:6379/1", "redis://:***@host:6379/1"),
        ("rediss://user:p%40ss@host/0", "rediss://user:***@host/0"),
        ("redis://user@host/0", "redis://user@host/0"),
        ("redis://host/0?password=s3cret&db=2", "redis://host/0?password=%2A%2A%2A&db=2"),
    ],
)
def test_mask_url(url, masked):
    assert mask_url(url) == masked


def test_unreachable_server_raises_store_unavailable():
    store = RedisStore(UNREACHABLE)  # building it does not connect
    session = Session(session_id="s1")
    assert store.ping() is False
    for call in (lambda: store.load("s1"), lambda: store.save(session), lambda: store.delete("s1")):
        started = time.monotonic()
        with pytest.raises(StoreUnavailable) as caught:
            call()
        assert time.monotonic() - started < 3
        message = str(caught.value)
        assert "redis://admin:***@127.0.0.1:1/0" in message
        assert "hunter2" not in message
    assert session.version == 0
    assert "hunter2" not in repr(store)
    store.close()


@pytest.mark.redis
def test_record_layout_and_ttl(redis_url, redis_prefix, redis_client):
    store = RedisStore(redis_url, prefix=redis_prefix, ttl=300)
    session = Session(session_id="s1", state="collecting")
    store.save(session)
    key = redis_prefix + "s1"
    record = redis_client.hgetall(key)
    assert set(record) == {b"version", b"data"}
    assert record[b"version"] == b"1"
    assert Session.model_validate_json(record[b"data"]).state == "collecting"
    assert 295 <= redis_client.ttl(key) <= 300
    redis_client.expire(key, 10)
    store.save(session)
    assert redis_client.ttl(key) > 10  # saving refreshes the TTL
    store.close()


@pytest.mark.redis
def test_key_of_the_wrong_type_is_treated_as_missing(redis_url, redis_prefix, redis_client):
    store = RedisStore(redis_url, prefix=redis_prefix)
    redis_client.set(redis_prefix + "s1", "garbage")
    assert store.load("s1") is None
    assert not redis_client.exists(redis_prefix + "s1")
    redis_client.rpush(redis_prefix + "s2", "garbage")
    session = Session(session_id="s2")
    store.save(session)  # a record that is not a session counts as missing
    assert store.load("s2").version == 1
    store.close()


@pytest.mark.redis
def test_works_with_a_client_passed_in(redis_prefix, redis_client):
    store = RedisStore("redis://unused", prefix=redis_prefix, client=redis_client)
    store.save(Session(session_id="s1"))
    assert store.load("s1").version == 1
    store.close()
    assert redis_client.ping()  # not closed: it belongs to the caller


@pytest.mark.redis
def test_a_repeated_write_whose_reply_was_lost_counts_as_done(redis_url, redis_prefix):
    store = RedisStore(redis_url, prefix=redis_prefix)
    pending = prepare_save(Session(session_id="s1"))
    args = [pending.expected, pending.version, pending.data, 60_000]
    key = redis_prefix + "s1"
    assert store._save_script(keys=[key], args=args) == [1, 1]
    assert store._save_script(keys=[key], args=args) == [1, 1]
    other = prepare_save(Session(session_id="s1"))
    assert store._save_script(keys=[key], args=[0, 1, other.data, 60_000]) == [0, 1]
    store.close()
