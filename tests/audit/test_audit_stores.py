"""The audit store contract, identical for memory, SQLite and the Redis Stream."""

from __future__ import annotations

import sqlite3
from datetime import timedelta

import pytest

from si_agent.audit import AuditEntry, AuditLog, create_audit_store
from si_agent.audit.model import parse_since, utc_now
from si_agent.audit.redis import RedisAuditStore
from si_agent.audit.sqlite import SQLiteAuditStore
from si_agent.config.settings import Settings
from si_agent.errors import UnknownBackendError
from si_agent.session import RedisStore


def entry(business: str = "card_apply", *, age: timedelta = timedelta(0), **extra) -> AuditEntry:
    return AuditEntry(at=utc_now() - age, event="state", user="u" * 32, business=business,
                      state="executing", outcome="running", **extra)


def test_entries_come_back_newest_first_with_ids(store):
    for business, outcome in [("card_apply", "running"), ("card_loss", "succeeded"),
                              ("card_apply", "failed")]:
        store.append(AuditEntry(event="submission", user="u" * 32, business=business,
                                channel="http", outcome=outcome, application_no="SI1",
                                values={"id_number": "3301**********0178"}))
    found = store.query()
    assert [(e.business, e.outcome) for e in found] == [
        ("card_apply", "failed"), ("card_loss", "succeeded"), ("card_apply", "running")]
    assert all(e.id for e in found) and len({e.id for e in found}) == 3
    assert found[0].values == {"id_number": "3301**********0178"}
    assert found[0].application_no == "SI1" and found[0].channel == "http"


def test_filters_by_business_since_and_limit(store):
    for age_hours, business in [(72, "card_apply"), (30, "card_loss"), (3, "card_apply"),
                                (1, "card_loss"), (0, "card_apply")]:
        store.append(entry(business, age=timedelta(hours=age_hours), job_id=f"job{age_hours}"))
    assert [e.job_id for e in store.query(business="card_apply")] == ["job0", "job3", "job72"]
    since = utc_now() - timedelta(hours=4)
    assert [e.job_id for e in store.query(since=since)] == ["job0", "job1", "job3"]
    assert [e.job_id for e in store.query(business="card_loss", since=since)] == ["job1"]
    assert [e.job_id for e in store.query(limit=2)] == ["job0", "job1"]
    assert store.query(business="nothing") == []


def test_purge_drops_what_is_older_than_the_cutoff(store):
    for days in (400, 200, 10, 0):
        store.append(entry(age=timedelta(days=days), job_id=f"job{days}"))
    store.purge(utc_now() - timedelta(days=180))
    assert [e.job_id for e in store.query()] == ["job0", "job10"]


def test_the_audit_log_applies_its_retention_when_it_appends(store):
    store.append(entry(age=timedelta(days=31), job_id="old"))
    store.append(entry(age=timedelta(days=29), job_id="kept"))
    audit = AuditLog(store, pepper="p" * 16, retention_days=30)
    audit.append(entry(job_id="new"))  # the first append of a process purges
    assert [e.job_id for e in store.query()] == ["new", "kept"]


def test_sqlite_entries_cannot_be_changed(tmp_path):
    store = SQLiteAuditStore(tmp_path / "audit.db")
    store.append(entry())
    with sqlite3.connect(tmp_path / "audit.db") as conn, pytest.raises(sqlite3.DatabaseError,
                                                                     match="append-only"):
        conn.execute("UPDATE audit SET business = 'x'")
    assert store.query()[0].business == "card_apply"


@pytest.mark.redis
def test_redis_entries_older_than_the_stream_still_append(redis_client, redis_prefix):
    store = RedisAuditStore(redis_client, redis_prefix + "audit")
    store.append(entry(job_id="now"))
    store.append(entry(age=timedelta(minutes=5), job_id="clock_behind"))
    assert {e.job_id for e in store.query()} == {"now", "clock_behind"}


@pytest.mark.redis
def test_auto_follows_the_session_store(tmp_path, redis_url, redis_prefix):
    settings = Settings(data_dir=tmp_path, redis_url=redis_url,
                        redis_prefix=redis_prefix + "session:")
    redis_sessions = RedisStore(redis_url, prefix=settings.redis_prefix)
    store = create_audit_store(settings, redis_sessions)
    assert isinstance(store, RedisAuditStore) and store.key == redis_prefix + "audit"
    assert isinstance(create_audit_store(settings, None), SQLiteAuditStore)
    assert create_audit_store(settings.replace(audit_store="memory"), redis_sessions).name == \
        "memory"


def test_an_unknown_store_name_lists_the_valid_ones(tmp_path):
    with pytest.raises(UnknownBackendError, match="auto, memory, redis, sqlite"):
        create_audit_store(Settings(data_dir=tmp_path, audit_store="mongo"))


@pytest.mark.parametrize("text, hours", [("2h", 2), ("30m", 0.5), ("7d", 168), ("1w", 168)])
def test_since_accepts_ages(text, hours):
    now = utc_now()
    assert parse_since(text, now=now) == now - timedelta(hours=hours)


def test_since_accepts_iso_times_in_utc_unless_they_say():
    assert parse_since("2026-12-01T08:00").isoformat() == "2026-12-01T08:00:00+00:00"
    assert parse_since("2026-12-01T08:00+08:00").timestamp() == \
        parse_since("2026-12-01T00:00").timestamp()
    for bad in ("yesterday", "", "99999999999999d"):
        with pytest.raises(ValueError):
            parse_since(bad)
