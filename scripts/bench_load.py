"""Load benchmark: many concurrent citizens, each in whole dialogues with think time.

Starts its own ``redis-server`` on a free port (no persistence; or uses
``--redis-url``) and ``gunicorn 'si_agent.server:create_app()'`` with ``--workers``
processes (Redis sessions and rate-limit counters, rule engine, embedded demo
backend). Then ``--users`` simulated users, started evenly over ``--ramp`` seconds,
each log in once and run the ``social_transfer`` (collect fields, confirm, submit)
and ``pension_query`` dialogues of ``scripts/bench_api.py`` again and again, waiting
a random think time before every message, until ``--duration`` seconds have passed
after the ramp. The users are asyncio tasks sharing one aiohttp connection pool
(httpx's pool spent more CPU than the server with a thousand waiting requests).

It prints the turn latency (p50/p95/p99), errors (any answer other than 200, or
none) and dialogues that did not end in ``done``; Redis commands per turn (INFO
commandstats, exact only on its own server), Redis memory per session (MEMORY USAGE
of every session key) and the server's RSS per worker (from /proc, at the end and
at its peak). The client shares the machine's CPUs with the server: its latency
includes the client's own queueing when the machine is saturated.

    python scripts/bench_load.py [--users 1000] [--duration 120] [--ramp 20]
                                 [--think 2 8] [--workers 4] [--threads 8]
                                 [--connections 256] [--redis-url URL]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import aiohttp
import redis
from bench_api import (
    DIALOGUES,
    _free_port,
    _start_gunicorn,
    _stop,
    _wait_until_up,
    server_cpu,
    worker_pids,
)


@dataclass
class Tally:
    """What all users measured."""

    latencies: list[float] = field(default_factory=list)
    dialogues: int = 0
    failed: int = 0
    errors: Counter[str] = field(default_factory=Counter)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--users", type=int, default=1000, help="concurrent simulated users")
    ap.add_argument("--duration", type=float, default=120.0,
                    help="seconds of full load, after the ramp")
    ap.add_argument("--ramp", type=float, default=20.0, help="seconds over which users start")
    ap.add_argument("--think", type=float, nargs=2, default=(2.0, 8.0), metavar=("MIN", "MAX"),
                    help="think time before each message, uniform in [MIN, MAX] seconds")
    ap.add_argument("--workers", type=int, default=4, help="gunicorn worker processes")
    ap.add_argument("--threads", type=int, default=8, help="threads per gunicorn worker")
    ap.add_argument("--connections", type=int, default=256, help="client connection pool size")
    ap.add_argument("--redis-url", default=None,
                    help="use this Redis (a key prefix of its own) instead of starting one; "
                         "its command counts then include other clients")
    args = ap.parse_args()

    run = uuid.uuid4().hex[:10]
    prefix = f"si-load-{run}:session:"
    data_dir = Path(tempfile.mkdtemp(prefix="si-bench-load-"))
    own_redis = None
    if args.redis_url is None:
        own_redis, args.redis_url = _start_redis(data_dir)
    client = redis.Redis.from_url(args.redis_url)
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    server = None
    try:  # the redis-server started above is stopped even if gunicorn does not start
        # Keep-alive longer than the think time, as a proxy in front would.
        server = _start_gunicorn(args, port, data_dir, prefix,
                                 extra=("--keep-alive", str(int(args.think[1]) + 5)))
        rss = RssSampler(server.pid)
        _wait_until_up(server, url, data_dir / "gunicorn.log")
        rss.start()
        before = _commandstats(client)
        memory_before = client.info("memory")["used_memory"]
        cpu = server_cpu(server.pid)
        client_cpu = time.process_time()
        tally, elapsed = asyncio.run(_load(args, url, run))
        client_cpu = time.process_time() - client_cpu
        cpu = server_cpu(server.pid) - cpu
        commands = _commandstats(client) - before
        memory_after = client.info("memory")["used_memory"]
        sessions = _session_sizes(client, prefix)
        rss.stop()
    finally:
        if server is not None:
            _stop(server)
        if own_redis is not None:
            _stop(own_redis)
            shutil.rmtree(data_dir, ignore_errors=True)
        else:
            keys = [*client.scan_iter(f"si-load-{run}:*"), *client.scan_iter(f"*:load-{run}-*")]
            for i in range(0, len(keys), 1000):
                client.delete(*keys[i:i + 1000])

    _report(args, tally, elapsed, commands, sessions, memory_after - memory_before, rss,
            cpu, client_cpu, own_redis is not None)
    if tally.errors or tally.failed:
        sys.exit(1)


# -- The users --------------------------------------------------------------------------------


async def _load(args: argparse.Namespace, url: str, run: str) -> tuple[Tally, float]:
    tally = Tally()
    connector = aiohttp.TCPConnector(limit=args.connections)
    timeout = aiohttp.ClientTimeout(total=120)
    async with aiohttp.ClientSession(url, connector=connector, timeout=timeout) as http:
        started = time.monotonic()
        stop_at = started + args.ramp + args.duration
        users = [_user(http, f"load-{run}-{i}", args.ramp * i / args.users, stop_at,
                       args.think, tally) for i in range(args.users)]
        await asyncio.gather(*users)
    return tally, time.monotonic() - started


async def _user(http: aiohttp.ClientSession, user_id: str, delay: float, stop_at: float,
                think: tuple[float, float], tally: Tally) -> None:
    await asyncio.sleep(delay)
    try:
        async with http.post("/api/token", json={"user_id": user_id}) as res:
            res.raise_for_status()
            token = (await res.json())["access_token"]
    except (aiohttp.ClientError, asyncio.TimeoutError) as exc:
        tally.errors[f"token: {type(exc).__name__}"] += 1
        return
    headers = {"Authorization": f"Bearer {token}"}
    while True:
        for business, messages in DIALOGUES.items():
            last = None
            for message in messages:
                await asyncio.sleep(random.uniform(*think))
                if time.monotonic() >= stop_at:
                    return  # a dialogue cut short by the end of the run is not counted
                started = time.perf_counter()
                try:
                    async with http.post("/api/chat", json={"message": message},
                                         headers=headers) as res:
                        error = None if res.status == 200 else f"HTTP {res.status}"
                        body = await res.json() if error is None else None
                except (aiohttp.ClientError, asyncio.TimeoutError) as exc:
                    error, body = type(exc).__name__, None
                tally.latencies.append(time.perf_counter() - started)
                if error:
                    tally.errors[error] += 1
                    last = None
                    break
                last = body
            tally.dialogues += 1
            if not last or last["state"] != "done" or last["business"]["id"] != business:
                tally.failed += 1
                async with http.delete("/api/session", headers=headers):
                    pass


# -- What the servers used --------------------------------------------------------------------


class RssSampler:
    """The workers' resident memory, sampled every second in a thread."""

    def __init__(self, master: int) -> None:
        self.master = master
        self.peak: dict[int, int] = {}
        self.last: dict[int, int] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()
        self._sample()

    def _run(self) -> None:
        while not self._stop.wait(1.0):
            self._sample()

    def _sample(self) -> None:
        for pid in worker_pids(self.master):
            rss = _rss_bytes(pid)
            if rss:
                self.last[pid] = rss
                self.peak[pid] = max(self.peak.get(pid, 0), rss)


def _rss_bytes(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def _start_redis(data_dir: Path) -> tuple[subprocess.Popen, str]:
    port = _free_port()
    command = ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
               "--appendonly", "no", "--dir", str(data_dir)]
    with (data_dir / "redis.log").open("wb") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT,
                                   start_new_session=True)
    url = f"redis://127.0.0.1:{port}/0"
    client = redis.Redis.from_url(url)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            if client.ping():
                return process, url
        except redis.ConnectionError:
            time.sleep(0.05)
    _stop(process)
    sys.exit(f"redis-server did not start:\n{(data_dir / 'redis.log').read_text()}")


def _commandstats(client: redis.Redis) -> Counter[str]:
    """Calls per command so far, without the commands this script sends."""
    stats = client.info("commandstats")
    ours = {"info", "memory", "scan", "ping", "config", "hello", "client", "del"}
    return Counter({name.removeprefix("cmdstat_"): value["calls"]
                    for name, value in stats.items()
                    if name.removeprefix("cmdstat_") not in ours})


def _session_sizes(client: redis.Redis, prefix: str) -> list[int]:
    keys = list(client.scan_iter(f"{prefix}*", count=1000))
    with client.pipeline(transaction=False) as pipe:
        for key in keys:
            pipe.memory_usage(key, samples=0)
        return [size for size in pipe.execute() if size]


# -- The report -------------------------------------------------------------------------------


def _report(args, tally: Tally, elapsed: float, commands: Counter[str], sessions: list[int],
            memory_delta: int, rss: RssSampler, cpu: float, client_cpu: float,
            own_redis: bool) -> None:
    turns = len(tally.latencies)
    print(f"si_agent load benchmark: {args.users} users (started over {args.ramp:g} s), "
          f"think {args.think[0]:g}-{args.think[1]:g} s, {args.duration:g} s of full load")
    print(f"gunicorn {args.workers} workers x {args.threads} threads, Redis sessions and "
          f"rate-limit counters, rule engine, embedded demo backend; {os.cpu_count()} CPUs "
          "shared with the client\n")
    header = (f"{'turns':>7} {'turns/s':>8} {'dialogues':>9} {'failed':>6} {'errors':>6} "
              f"{'p50 ms':>8} {'p95 ms':>8} {'p99 ms':>8} {'max ms':>8}")
    print(header)
    print("-" * len(header))
    q = statistics.quantiles(tally.latencies, n=100) if turns > 1 else [0.0] * 99
    print(f"{turns:>7} {turns / elapsed:>8.0f} {tally.dialogues:>9} {tally.failed:>6} "
          f"{sum(tally.errors.values()):>6} {q[49] * 1000:>8.1f} {q[94] * 1000:>8.1f} "
          f"{q[98] * 1000:>8.1f} {max(tally.latencies, default=0) * 1000:>8.1f}")
    if tally.errors:
        print("errors: " + ", ".join(f"{k} x{n}" for k, n in tally.errors.most_common()))
    total = sum(commands.values())
    top = ", ".join(f"{name.upper()} {n / max(turns, 1):.2f}" for name, n in commands.most_common())
    note = "" if own_redis else " (shared Redis: includes other clients)"
    print(f"\nRedis commands per turn: {total / max(turns, 1):.2f}{note}, counting those run "
          "inside Lua scripts (EVALSHA) too; token requests and session resets included:")
    print(f"  {top}")
    if sessions:
        print(f"Redis memory per session key: mean {statistics.fmean(sessions):,.0f} B, "
              f"max {max(sessions):,} B over {len(sessions)} sessions (MEMORY USAGE); "
              f"used_memory grew {memory_delta / len(sessions):,.0f} B per session "
              "(sessions, jobs, rate-limit counters)")
    pids = sorted(rss.peak)
    per_worker = ", ".join(f"{rss.last.get(p, 0) / 2**20:.0f}" for p in pids)
    peaks = ", ".join(f"{rss.peak[p] / 2**20:.0f}" for p in pids)
    print(f"Server RSS per worker (MiB): {per_worker} at the end; peak {peaks}")
    print(f"Server CPU: {cpu / max(turns, 1) * 1000:.2f} ms per turn (all workers); client CPU "
          f"{client_cpu / max(turns, 1) * 1000:.2f} ms per turn")


if __name__ == "__main__":
    main()
