"""Concurrent turns on one session lose nothing: threads (every backend), processes.

Each worker repeatedly does what the controller does for a turn: load (or start
a fresh session), set one field of its own, save, and on ``SessionConflict``
reload and try again. At the end every field must be there and the version
must equal the number of successful saves.
"""

from __future__ import annotations

import multiprocessing
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from si_agent.errors import SessionConflict
from si_agent.session import RedisStore, SessionStore, SQLiteStore
from si_agent.session.model import FieldState, Session

SESSION_ID = "shared-session"
MAX_ATTEMPTS = 500


def _update_fields(store: SessionStore, worker: int, rounds: int) -> int:
    """Set fields ``w{worker}r{0..rounds-1}`` one save at a time; returns the conflicts."""
    conflicts = 0
    for round_ in range(rounds):
        for _attempt in range(MAX_ATTEMPTS):
            session = store.load(SESSION_ID) or Session(session_id=SESSION_ID)
            session.fields[f"w{worker}r{round_}"] = FieldState(
                value=worker * 100 + round_, status="collected"
            )
            session.turn += 1
            time.sleep(0.001)  # the turn's work; lets other workers interleave
            try:
                store.save(session)
                break
            except SessionConflict:
                conflicts += 1
        else:
            raise AssertionError(f"worker {worker} never managed to save round {round_}")
    return conflicts


def _check_final(store: SessionStore, workers: int, rounds: int) -> None:
    final = store.load(SESSION_ID)
    assert final is not None
    expected = {f"w{w}r{r}": w * 100 + r for w in range(workers) for r in range(rounds)}
    assert {k: f.value for k, f in final.fields.items()} == expected
    assert final.version == workers * rounds
    assert final.turn == workers * rounds


def test_threads_updating_one_session_lose_no_field(backend):
    store = backend.make()
    workers, rounds = 8, 5
    barrier = threading.Barrier(workers)

    def work(worker: int) -> int:
        barrier.wait(timeout=10)
        return _update_fields(store, worker, rounds)

    with ThreadPoolExecutor(max_workers=workers) as pool:
        conflicts = list(pool.map(work, range(workers)))

    _check_final(store, workers, rounds)
    assert sum(conflicts) > 0, "the workers never collided; the test proves nothing"


def _process_worker(
    kind: str, config: dict[str, Any], worker: int, rounds: int, barrier: Any, results: Any
) -> None:
    if kind == "sqlite":
        store: SessionStore = SQLiteStore(config["path"])
    else:
        store = RedisStore(config["url"], prefix=config["prefix"])
    barrier.wait(timeout=60)
    results.put((worker, _update_fields(store, worker, rounds)))


@pytest.mark.parametrize("kind", ["sqlite", pytest.param("redis", marks=pytest.mark.redis)])
def test_processes_updating_one_session_lose_no_field(kind, request, tmp_path):
    if kind == "sqlite":
        config = {"path": str(tmp_path / "sessions.db")}
        store: SessionStore = SQLiteStore(config["path"])
    else:
        config = {
            "url": request.getfixturevalue("redis_url"),
            "prefix": request.getfixturevalue("redis_prefix"),
        }
        store = RedisStore(config["url"], prefix=config["prefix"])
    workers, rounds = 4, 10
    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Barrier(workers)
    results = ctx.Queue()
    processes = [
        ctx.Process(target=_process_worker, args=(kind, config, w, rounds, barrier, results))
        for w in range(workers)
    ]
    for process in processes:
        process.start()
    try:
        reported = dict(results.get(timeout=120) for _ in range(workers))
    finally:
        for process in processes:
            process.join(timeout=30)
    assert [p.exitcode for p in processes] == [0] * workers
    assert sorted(reported) == list(range(workers))
    _check_final(store, workers, rounds)
    store.close()
