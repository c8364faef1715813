"""How fast the console's conversation review and analytics read the turn-event record.

Writes N recorded turns (conversations of ``--turns-per`` turns, realistic events) into
a fresh SQLite turn store, then times: appending one event, the review list (the 200
most recently active conversations), one conversation, and the analytics report over
the newest 1,000 conversations (what the console reads).

    .venv/bin/python scripts/bench_turn_store.py --turns 100000
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from datetime import timedelta
from pathlib import Path

from si_agent.audit import AuditLog, MemoryAuditStore
from si_agent.audit.model import utc_now
from si_agent.turns import TurnEvent, TurnLog
from si_agent.turns.analytics import report
from si_agent.turns.model import CallView, FieldChange
from si_agent.turns.sqlite import SQLiteTurnStore

STATES = ["collecting", "collecting", "collecting", "confirming", "done"]


def fill(store: SQLiteTurnStore, turns: int, per: int) -> None:
    rng = random.Random(7)
    start = utc_now() - timedelta(days=6)
    conn = store._connections.get()
    conn.execute("BEGIN")
    for n in range(turns):
        conv, turn = divmod(n, per)
        e = TurnEvent(
            at=start + timedelta(seconds=n * 5), conversation=f"{conv:024x}", user=f"{conv:016x}",
            turn=turn + 1, state_before="idle" if turn == 0 else STATES[min(turn, 4) - 1],
            state_after=STATES[min(turn, 4)], business=rng.choice(["card_loss", "card_apply"]),
            awaiting="name", engine="rules", rule="values", confidence=1.0,
            calls=[CallView(name="provide_field")],
            fields=[FieldChange(key="name", label="姓名", value="张*", status="collected")],
            latency_ms=rng.randint(1, 400), input="我叫张*", reply="已记录：姓名 张*。",
            outcome="done" if turn == per - 1 else None)
        conn.execute("INSERT INTO turns (at, kind, conversation, data) VALUES (?, ?, ?, ?)",
                     (e.at.timestamp(), e.kind, e.conversation, e.model_dump_json()))
    conn.execute("COMMIT")


def timed(label: str, fn, repeat: int = 3) -> None:
    best = min(_once(fn) for _ in range(repeat))
    print(f"{label:<48} {best * 1000:9.1f} ms")


def _once(fn) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=100_000)
    parser.add_argument("--turns-per", type=int, default=10)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        store = SQLiteTurnStore(Path(tmp) / "turns.db")
        t = time.perf_counter()
        fill(store, args.turns, args.turns_per)
        print(f"{args.turns} turns written in {time.perf_counter() - t:.1f} s")
        log = TurnLog(store, AuditLog(MemoryAuditStore(), pepper="bench-pepper"))
        one = TurnEvent(conversation="x" * 24, user="u" * 16, turn=1, state_before="idle",
                        state_after="collecting")
        timed("append one event", lambda: store.append(one), repeat=20)
        timed("review list (200 conversations)", lambda: log.recent())
        timed("one conversation", lambda: log.conversation(f"{5:024x}"))
        timed("analytics report (1,000 conversations)",
              lambda: report(log.recent(limit=1000)))


if __name__ == "__main__":
    main()
