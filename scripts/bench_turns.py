"""Benchmark: replay the dialogue corpus in-process with the rule engine per store.

Prints turns/s and p50/p99 turn latency for the memory, sqlite and redis
session stores. Executions go to the embedded demo backend (in-process HTTP).
The Redis store writes under a prefix of this run's own (``si-bench-turns-…:``),
deleted at the end, also after a failure or Ctrl-C.

    python scripts/bench_turns.py [--rounds 3] [--redis-url redis://127.0.0.1:6379/15]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
import uuid
from pathlib import Path

import redis

from si_agent.cli import demo_backend_hook
from si_agent.config.loader import load_businesses
from si_agent.config.settings import Settings
from si_agent.engine.rules import RuleEngine
from si_agent.executor import Executors
from si_agent.flow.controller import Controller
from si_agent.replay import load_dialogues, replay
from si_agent.session import MemoryStore, RedisStore, SQLiteStore

ROOT = Path(__file__).resolve().parents[1]


def _timed(controller: Controller) -> list[float]:
    samples: list[float] = []
    inner = controller.handle

    def handle(session_id: str, message: str):
        t = time.perf_counter()
        try:
            return inner(session_id, message)
        finally:
            samples.append(time.perf_counter() - t)

    controller.handle = handle  # type: ignore[method-assign]
    return samples


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--redis-url", default="redis://127.0.0.1:6379/15")
    ap.add_argument("--dialogues", default=str(ROOT / "tests" / "dialogues"))
    args = ap.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="si-bench-"))
    prefix = f"si-bench-turns-{uuid.uuid4().hex[:10]}:session:"
    try:
        _run(args, tmp, prefix)
    finally:
        left = delete_prefix(args.redis_url, prefix.removesuffix("session:"))
        shutil.rmtree(tmp, ignore_errors=True)
    if left:
        raise SystemExit(f"{left} Redis keys under {prefix} were left behind")


def delete_prefix(redis_url: str, prefix: str) -> int:
    """Delete every key under ``prefix``; return how many are left (0 normally)."""
    client = redis.Redis.from_url(redis_url)
    try:
        keys = list(client.scan_iter(f"{prefix}*", count=1000))
        for i in range(0, len(keys), 1000):
            client.delete(*keys[i:i + 1000])
        return sum(1 for _ in client.scan_iter(f"{prefix}*", count=1000))
    finally:
        client.close()


def _run(args: argparse.Namespace, tmp: Path, prefix: str) -> None:
    settings = Settings(business_dir=ROOT / "businesses", data_dir=tmp)
    catalog = load_businesses(settings.business_dir)
    dialogues = load_dialogues([args.dialogues])
    stores = {
        "memory": MemoryStore(),
        "sqlite": SQLiteStore(tmp / "sessions.db"),
        "redis": RedisStore(args.redis_url, prefix=prefix),
    }
    executors = Executors(settings)
    # Warm up once (imports, the demo backend's database) outside the timings.
    warm = Controller(catalog, MemoryStore(), RuleEngine(catalog), executors)
    for source, transcript in dialogues:
        replay(warm, transcript, source=source, backend=demo_backend_hook(settings))
    print(f"{len(dialogues)} dialogues x {args.rounds} rounds, rule engine\n")
    print(f"{'store':<8} {'turns':>7} {'turns/s':>9} {'p50 ms':>8} {'p99 ms':>8} {'failed':>7}")
    for name, store in stores.items():
        controller = Controller(catalog, store, RuleEngine(catalog), executors)
        samples = _timed(controller)
        failed = 0
        started = time.perf_counter()
        for _ in range(args.rounds):
            for source, transcript in dialogues:
                failed += not replay(controller, transcript, source=source,
                                     backend=demo_backend_hook(settings)).passed
        elapsed = time.perf_counter() - started
        q = statistics.quantiles(samples, n=100)
        print(f"{name:<8} {len(samples):>7} {len(samples) / elapsed:>9.0f} "
              f"{q[49] * 1000:>8.2f} {q[98] * 1000:>8.2f} {failed:>7}")


if __name__ == "__main__":
    main()
