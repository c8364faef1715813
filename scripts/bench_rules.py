"""Benchmark: the rule engine's ``decide`` alone, over the dialogue transcripts.

Replays the transcripts (memory store, embedded demo backend) and times every
``RuleEngine.decide`` call the controller makes; prints the decisions, their
p50/p99 latency, the p50 of their thread CPU time (steadier than wall time on
a shared machine) and the median of the per-round totals.

    python scripts/bench_rules.py [--rounds 5] [--dialogues tests/dialogues]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from si_agent.cli import demo_backend_hook
from si_agent.config.loader import load_businesses
from si_agent.config.settings import Settings
from si_agent.engine.rules import RuleEngine
from si_agent.executor import Executors
from si_agent.flow.controller import Controller
from si_agent.replay import load_dialogues, replay
from si_agent.session import MemoryStore

ROOT = Path(__file__).resolve().parents[1]


class TimedRules(RuleEngine):
    """The rule engine, recording how long each decision takes."""

    samples: list[float]
    cpu: list[float]

    def decide(self, *args: Any, **kwargs: Any) -> Any:
        t, c = time.perf_counter(), time.thread_time()
        try:
            return super().decide(*args, **kwargs)
        finally:
            self.cpu.append(time.thread_time() - c)
            self.samples.append(time.perf_counter() - t)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--dialogues", default=str(ROOT / "tests" / "dialogues"))
    args = ap.parse_args()

    settings = Settings(business_dir=ROOT / "businesses",
                        data_dir=Path(tempfile.mkdtemp(prefix="si-bench-rules-")))
    catalog = load_businesses(settings.business_dir)
    dialogues = load_dialogues([args.dialogues])
    executors = Executors(settings)
    engine = TimedRules(catalog)
    engine.samples, engine.cpu = [], []
    controller = Controller(catalog, MemoryStore(), engine, executors)
    for source, transcript in dialogues:  # warm-up: imports, caches, the demo database
        replay(controller, transcript, source=source, backend=demo_backend_hook(settings))
    engine.samples, engine.cpu = [], []
    totals = []
    failed = 0
    for _ in range(args.rounds):
        start = len(engine.samples)
        for source, transcript in dialogues:
            failed += not replay(controller, transcript, source=source,
                                 backend=demo_backend_hook(settings)).passed
        totals.append(sum(engine.samples[start:]))
    q = statistics.quantiles(engine.samples, n=100)
    print(f"{len(dialogues)} dialogues x {args.rounds} rounds\n")
    cpu = statistics.median(engine.cpu)
    print(f"{'decisions':>9} {'p50 us':>8} {'p99 us':>8} {'cpu p50 us':>11} "
          f"{'round ms (median)':>18} {'failed':>7}")
    print(f"{len(engine.samples):>9} {q[49] * 1e6:>8.0f} {q[98] * 1e6:>8.0f} {cpu * 1e6:>11.0f} "
          f"{statistics.median(totals) * 1000:>18.1f} {failed:>7}")


if __name__ == "__main__":
    main()
