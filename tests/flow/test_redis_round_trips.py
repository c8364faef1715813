"""A turn reads its session from Redis once and writes it once (one round trip each).

The client is redis-py's own, talking to the test Redis; the subclass only counts
the commands it sends.
"""

from __future__ import annotations

from collections import Counter

import pytest
import redis

from si_agent.session import RedisStore

ZHANG_WEI = "330122196303150178"


class CountingRedis(redis.Redis):
    """redis.Redis that counts the commands it sends, by name."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.sent: Counter[str] = Counter()

    def execute_command(self, *args, **options):
        self.sent[str(args[0]).upper()] += 1
        return super().execute_command(*args, **options)


@pytest.fixture
def counted(redis_url, redis_prefix):
    client = CountingRedis.from_url(redis_url)
    yield RedisStore(redis_url, prefix=redis_prefix + "session:", client=client), client
    client.close()


@pytest.mark.redis
def test_one_load_and_one_save_per_turn(make_controller, counted):
    store, client = counted
    controller = make_controller(store=store)
    # A new session: no record found, so its expiry mark is looked up (and used up,
    # DEL); the first save also writes the mark (SET). Once per session.
    client.sent.clear()
    controller.handle("u", "我要转社保")
    assert client.sent == {"HMGET": 1, "DEL": 1, "EVALSHA": 1, "SET": 1}
    for message in ["从杭州转到苏州", ZHANG_WEI, "张伟"]:
        client.sent.clear()
        controller.handle("u", message)
        assert client.sent == {"HMGET": 1, "EVALSHA": 1}, message

    # A submission: the session with its job in one write, then the outcome in another.
    client.sent.clear()
    turn = controller.handle("u", "确认")
    assert turn.state == "done"
    assert client.sent == {"HMGET": 1, "EVALSHA": 2}
