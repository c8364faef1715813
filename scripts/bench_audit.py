"""Benchmark: the audit log's cost per entry and per query, for each store.

An entry is what a submission's turn writes (``AuditLog.state_change``: masking the
fields, hashing the user, appending). Prints, per store, appends/s and p50/p99 of
one append, then p50 of a query for the newest 100 entries, all and of one business.

    python scripts/bench_audit.py [--entries 5000] [--redis-url redis://127.0.0.1:6379/15]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
import uuid
from datetime import timedelta
from pathlib import Path

from si_agent.audit import AuditLog, MemoryAuditStore
from si_agent.audit.redis import RedisAuditStore
from si_agent.audit.sqlite import SQLiteAuditStore
from si_agent.config.loader import load_businesses

ROOT = Path(__file__).resolve().parents[1]
VALUES = {"from_city": "杭州市", "to_city": "苏州市", "id_number": "330122196303150178",
          "name": "张伟"}
QUERIES = 50


def _ms(seconds: float) -> float:
    return seconds * 1000


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--entries", type=int, default=5000)
    ap.add_argument("--redis-url", default="redis://127.0.0.1:6379/15")
    args = ap.parse_args()

    import redis

    catalog = load_businesses(ROOT / "businesses")
    businesses = [catalog["social_transfer"], catalog["card_loss"], catalog["card_apply"]]
    tmp = Path(tempfile.mkdtemp(prefix="si-bench-audit-"))
    client = redis.Redis.from_url(args.redis_url)
    key = f"si-bench-audit-{uuid.uuid4().hex}"
    stores = {
        "memory": MemoryAuditStore(),
        "sqlite": SQLiteAuditStore(tmp / "audit.db"),
        "redis": RedisAuditStore(client, key, retention=timedelta(days=180)),
    }
    print(f"{args.entries} entries per store; queries: newest 100, {QUERIES} times\n")
    print(f"{'store':<8} {'appends/s':>10} {'p50 ms':>8} {'p99 ms':>8} "
          f"{'query ms':>9} {'by business ms':>15}")
    try:
        for name, store in stores.items():
            audit = AuditLog(store, pepper="bench" * 8)
            samples = []
            started = time.perf_counter()
            for i in range(args.entries):
                t = time.perf_counter()
                audit.state_change(f"user{i % 500}", businesses[i % 3], "done", job=None,
                                   values=VALUES)
                samples.append(time.perf_counter() - t)
            elapsed = time.perf_counter() - started
            samples.sort()
            query, by_business = [], []
            for _ in range(QUERIES):
                t = time.perf_counter()
                assert len(audit.query(limit=100)) == 100
                query.append(time.perf_counter() - t)
                t = time.perf_counter()
                assert len(audit.query(business="card_loss", limit=100)) == 100
                by_business.append(time.perf_counter() - t)
            print(f"{name:<8} {args.entries / elapsed:>10.0f} "
                  f"{_ms(statistics.median(samples)):>8.3f} "
                  f"{_ms(samples[int(len(samples) * 0.99)]):>8.3f} "
                  f"{_ms(statistics.median(query)):>9.2f} "
                  f"{_ms(statistics.median(by_business)):>15.2f}")
    finally:
        client.delete(key)
        client.close()


if __name__ == "__main__":
    main()
