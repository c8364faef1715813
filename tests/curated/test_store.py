"""The three curated stores behave alike; SQLite and Redis share answers between processes."""

from __future__ import annotations

import pytest

from si_agent.curated.memory import MemoryCuratedStore
from si_agent.curated.model import CuratedAnswer, Draft
from si_agent.curated.redis import RedisCuratedStore
from si_agent.curated.sqlite import SQLiteCuratedStore


def _answer(question: str = "失业金怎么领", **changes) -> CuratedAnswer:
    return CuratedAnswer(question=question, answer="带身份证到窗口申请。", source="市人社局常见问题",
                         as_of="2025-06-01", author="alice", **changes)


@pytest.fixture(params=["memory", "sqlite", "redis"])
def stores(request, tmp_path):
    """Two handles on one store (two processes, or two machines for Redis)."""
    if request.param == "memory":
        store = MemoryCuratedStore()
        yield store, store
    elif request.param == "sqlite":
        yield SQLiteCuratedStore(tmp_path / "curated.db"), SQLiteCuratedStore(tmp_path / "curated.db")
    else:
        import redis

        client = request.getfixturevalue("redis_client")
        prefix = request.getfixturevalue("redis_prefix")
        other = redis.Redis.from_url(request.getfixturevalue("redis_url"))
        yield RedisCuratedStore(client, prefix=prefix), RedisCuratedStore(other, prefix=prefix)
        other.close()


def test_write_read_count_revise_delete(stores):
    one, two = stores
    assert one.all() == [] and one.revision() == two.revision()
    before = two.revision()
    a = _answer(paraphrases=["失业金咋领"], businesses=["unemployment_benefit"])
    one.write([a])
    assert two.revision() != before  # the other machine sees the change
    got = two.get(a.id)
    assert got == a and got.paraphrases == ["失业金咋领"] and got.hits == 0
    revision = one.revision()
    two.count_hit(a.id)
    two.count_hit(a.id)
    assert one.get(a.id).hits == 2 and one.revision() == revision  # hits change no revision
    new = a.revised(Draft(question=a.question, answer="新的答案。", source="新来源", as_of="2025年7月"),
                    "bob")
    one.write([new], [a])
    got = two.get(a.id)
    assert (got.answer, got.version, got.as_of, got.hits, got.updated_by) == (
        "新的答案。", 2, "2025-07", 2, "bob")
    assert [h.answer for h in two.history(a.id)] == ["带身份证到窗口申请。"]
    assert [x.id for x in two.all()] == [a.id]
    assert one.delete(a.id) and not one.delete(a.id)
    assert two.get(a.id) is None and two.history(a.id) == [] and two.all() == []
    two.count_hit(a.id)  # a hit racing a delete leaves nothing behind
    assert one.get(a.id) is None


def test_a_write_of_many_is_all_or_nothing(stores):
    one, two = stores
    answers = [_answer(f"问题{i}") for i in range(50)]
    one.write(answers)
    assert len(two.all()) == 50


def test_the_sqlite_file_is_private(tmp_path):
    SQLiteCuratedStore(tmp_path / "curated.db")
    assert (tmp_path / "curated.db").stat().st_mode & 0o077 == 0


def test_the_store_follows_the_session_store(tmp_path, redis_url, redis_prefix):
    from si_agent.config.settings import Settings
    from si_agent.curated.store import create_curated_store
    from si_agent.session import create_store

    base = Settings(data_dir=tmp_path, knowledge="none", redis_url=redis_url,
                    redis_prefix=redis_prefix + "session:")
    kinds = {}
    for kind in ("memory", "sqlite", "redis"):
        settings = base.replace(session_store=kind)
        kinds[kind] = type(create_curated_store(settings, create_store(settings))).__name__
    assert kinds == {"memory": "MemoryCuratedStore", "sqlite": "SQLiteCuratedStore",
                     "redis": "RedisCuratedStore"}
    settings = base.replace(session_store="redis")
    store = create_curated_store(settings, create_store(settings))
    assert store.prefix == redis_prefix + "curated:"
