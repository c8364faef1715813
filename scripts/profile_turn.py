"""Profile one chat turn in-process: server CPU and wall time per phase, Redis round trips.

Builds the real app (``create_app``) with Redis sessions, the rule engine, the
embedded demo backend and the rate limiter counting in Redis, as in production,
and replays the ``scripts/bench_api.py`` dialogues through Flask's test client.
The phases are measured by wrapping the functions that do them (in this process
only; the library has no timing code):

    auth      JWT decode and verification (flask-jwt-extended), wherever it is called
    limiter   the rate-limit check (si_agent's, or flask-limiter's before), without auth
    load      the session store's ``load``
    engine    the controller's turn without load, save and the submission
    execute   a submission (the job driver; the demo backend answers in-process)
    save      the session store's ``save``
    record    the turn-event record (``TurnLog.turn``: masking, the event, its append)
    render    the chat view itself: body checks, ``model_dump`` and ``jsonify``
    other     the rest of the WSGI call: Flask/werkzeug dispatch, hooks, logging

Times are exclusive (a phase nested in another counts once, in the inner one). CPU
is the serving thread's CPU (``time.thread_time``); wall includes waiting for
Redis. Redis round trips and commands are counted in the client. A second table
compares the rate-limit strategies of the ``limits`` library on the same Redis.

    python scripts/profile_turn.py [--rounds 200] [--redis-url redis://127.0.0.1:6379/15]
"""

from __future__ import annotations

import argparse
import functools
import gc
import sys
import tempfile
import time
import uuid
from collections import Counter, defaultdict
from pathlib import Path

import redis
from redis.connection import AbstractConnection

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from bench_api import DIALOGUES  # noqa: E402

PHASES = ["auth", "limiter", "load", "engine", "execute", "save", "record", "render", "other"]


class Phases:
    """Exclusive CPU and wall time per phase, from wrapped functions (one thread)."""

    def __init__(self) -> None:
        self.cpu: dict[str, float] = defaultdict(float)
        self.wall: dict[str, float] = defaultdict(float)
        self.calls: Counter[str] = Counter()
        self._stack: list[list[float]] = []

    def wrap(self, phase: str, fn):
        @functools.wraps(fn)
        def timed(*args, **kwargs):
            frame = [time.thread_time(), time.perf_counter(), 0.0, 0.0]
            self._stack.append(frame)
            try:
                return fn(*args, **kwargs)
            finally:
                self._stack.pop()
                cpu = time.thread_time() - frame[0]
                wall = time.perf_counter() - frame[1]
                self.cpu[phase] += cpu - frame[2]
                self.wall[phase] += wall - frame[3]
                self.calls[phase] += 1
                if self._stack:
                    self._stack[-1][2] += cpu
                    self._stack[-1][3] += wall

        return timed

    def reset(self) -> None:
        self.cpu.clear()
        self.wall.clear()
        self.calls.clear()


class RedisCounter:
    """Round trips (packets sent) and commands (by name) of every Redis client here."""

    def __init__(self) -> None:
        self.round_trips = 0
        self.commands: Counter[str] = Counter()
        send = AbstractConnection.send_packed_command
        one, many = AbstractConnection.send_command, AbstractConnection.pack_commands

        def send_packed_command(conn, command, check_health=True):
            self.round_trips += 1
            return send(conn, command, check_health)

        def send_command(conn, *args, **kwargs):
            self._count(args)
            return one(conn, *args, **kwargs)

        def pack_commands(conn, commands):
            commands = list(commands)
            for args in commands:
                self._count(args)
            return many(conn, commands)

        AbstractConnection.send_packed_command = send_packed_command
        AbstractConnection.send_command = send_command
        AbstractConnection.pack_commands = pack_commands

    def _count(self, args) -> None:
        name = args[0].decode() if isinstance(args[0], bytes) else str(args[0])
        self.commands[name.upper()] += 1

    def reset(self) -> None:
        self.round_trips = 0
        self.commands.clear()


def instrument(app, phases: Phases) -> None:
    """Wrap the functions that make up a turn (see the module docstring)."""
    import flask_jwt_extended.view_decorators as jwt_views

    from si_agent.flow.controller import Controller
    from si_agent.flow.execution import JobDriver

    jwt_views._decode_jwt_from_request = phases.wrap("auth", jwt_views._decode_jwt_from_request)
    try:  # si_agent's own limiter on the limits library
        from si_agent.server.ratelimit import RateLimiter
    except ImportError:  # before: flask-limiter, its bound check a before-request hook
        from flask_limiter import Limiter

        hooks = app.before_request_funcs[None]
        for i, hook in enumerate(hooks):
            if getattr(hook, "__self__", None).__class__ is Limiter:
                hooks[i] = phases.wrap("limiter", hook)
    else:
        RateLimiter.hit = phases.wrap("limiter", RateLimiter.hit)
    store = app.config["SI_CONTROLLER"].store
    store.load = phases.wrap("load", store.load)
    store.save = phases.wrap("save", store.save)
    Controller._turn = phases.wrap("engine", Controller._turn)
    JobDriver.drive = phases.wrap("execute", JobDriver.drive)
    turns = app.config["SI_CONTROLLER"].turns
    turns.turn = phases.wrap("record", turns.turn)
    app.view_functions["chat.chat"] = phases.wrap("render", app.view_functions["chat.chat"])
    app.wsgi_app = phases.wrap("other", app.wsgi_app)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=200, help="times every dialogue is replayed")
    ap.add_argument("--redis-url", default="redis://127.0.0.1:6379/15")
    ap.add_argument("--limiter-checks", type=int, default=5000)
    ap.add_argument("--no-freeze", action="store_true",
                    help="leave the start-up objects to the garbage collector (the server "
                         "freezes them: si_agent.server.running.settle_start_up)")
    args = ap.parse_args()

    from si_agent.config.settings import Settings
    from si_agent.server import create_app
    from si_agent.server.running import settle_start_up

    run = uuid.uuid4().hex[:10]
    prefix = f"si-profile-{run}:"
    data_dir = Path(tempfile.mkdtemp(prefix="si-profile-"))
    settings = Settings(business_dir=ROOT / "businesses", data_dir=data_dir,
                        session_store="redis", redis_url=args.redis_url, redis_prefix=prefix,
                        engine="rules", knowledge="none", rate_limit="1000000 per minute",
                        rate_limit_storage=args.redis_url, log_level="WARNING")
    app = create_app(settings)
    client = app.test_client()
    token = client.post("/api/token", json={"user_id": f"profile-{run}"}).get_json()
    headers = {"Authorization": f"Bearer {token['access_token']}"}
    phases = Phases()
    instrument(app, phases)
    counter = RedisCounter()

    def dialogues(rounds: int) -> int:
        turns = 0
        for _ in range(rounds):
            for business, messages in DIALOGUES.items():
                for message in messages:
                    res = client.post("/api/chat", json={"message": message}, headers=headers)
                    turns += 1
                    if res.status_code != 200:
                        raise SystemExit(f"turn failed: {res.status_code} {res.get_data(True)}")
                body = res.get_json()
                if body["state"] != "done" or body["business"]["id"] != business:
                    raise SystemExit(f"{business} did not end in done: {body['state']}")
        return turns

    try:
        dialogues(3)  # warm up: imports, the demo backend's database, toolsets
        if not args.no_freeze:
            settle_start_up()  # as a server's worker does once its app is built
        phases.reset()
        counter.reset()
        collector = Collector()
        with collector:
            turns = dialogues(args.rounds)
        _print_phases(phases, counter, turns)
        collector.print(turns)
        print()
        _print_limiter(args.redis_url, run, args.limiter_checks, counter)
    finally:
        client_ = redis.Redis.from_url(args.redis_url)
        keys = [*client_.scan_iter(f"{prefix}*"), *client_.scan_iter(f"*{run}*")]
        if keys:
            client_.delete(*keys)


def _print_phases(phases: Phases, counter: RedisCounter, turns: int) -> None:
    print(f"Per-turn server time by phase, in-process ({turns} turns, "
          "Redis sessions + Redis limiter, rule engine)\n")
    header = f"{'phase':<9} {'CPU us':>8} {'CPU %':>6} {'wall us':>8} {'calls/turn':>10}"
    print(header)
    print("-" * len(header))
    total_cpu = sum(phases.cpu.values())
    for phase in PHASES:
        cpu = phases.cpu.get(phase, 0.0)
        print(f"{phase:<9} {cpu / turns * 1e6:>8.0f} {cpu / total_cpu:>6.1%} "
              f"{phases.wall.get(phase, 0.0) / turns * 1e6:>8.0f} "
              f"{phases.calls.get(phase, 0) / turns:>10.2f}")
    print(f"{'total':<9} {total_cpu / turns * 1e6:>8.0f} {'':>6} "
          f"{sum(phases.wall.values()) / turns * 1e6:>8.0f}")
    commands = ", ".join(f"{name} {n / turns:.2f}" for name, n in counter.commands.most_common())
    print(f"\nRedis per turn: {counter.round_trips / turns:.2f} round trips; commands: {commands}")


class Collector:
    """Thread CPU spent in the cyclic garbage collector, per generation (``gc.callbacks``);
    it is part of whichever phase allocated when a collection started."""

    def __init__(self) -> None:
        self.cpu = [0.0, 0.0, 0.0]
        self.runs = [0, 0, 0]
        self._started = 0.0

    def _callback(self, phase: str, info: dict) -> None:
        if phase == "start":
            self._started = time.thread_time()
        else:
            self.cpu[info["generation"]] += time.thread_time() - self._started
            self.runs[info["generation"]] += 1

    def __enter__(self) -> Collector:
        gc.callbacks.append(self._callback)
        return self

    def __exit__(self, *exc: object) -> None:
        gc.callbacks.remove(self._callback)

    def print(self, turns: int) -> None:
        parts = ", ".join(f"generation {g}: {self.runs[g]} runs, {self.cpu[g] / turns * 1e6:.0f} us"
                          for g in range(3))
        print(f"Garbage collector per turn (within the phases above; {gc.get_freeze_count()} "
              f"objects frozen at start): {parts}")


def _print_limiter(redis_url: str, run: str, checks: int, counter: RedisCounter) -> None:
    from limits import parse
    from limits.storage import storage_from_string
    from limits.strategies import STRATEGIES

    item, users = parse("60 per minute"), 100
    client = redis.Redis.from_url(redis_url)
    print(f"Rate-limit strategies of limits at 60 per minute ({checks} checks over {users} "
          "users, Redis)\n")
    header = (f"{'strategy':<24} {'CPU us/check':>12} {'wall us/check':>13} {'round trips':>11} "
              f"{'Redis bytes/user':>16}")
    print(header)
    print("-" * len(header))
    for name, strategy in STRATEGIES.items():
        limiter = strategy(storage_from_string(redis_url))
        limiter.hit(item, name, run, "warm")
        counter.reset()
        cpu, wall = time.thread_time(), time.perf_counter()
        for i in range(checks):
            limiter.hit(item, name, run, f"u{i % users}")
        cpu, wall = time.thread_time() - cpu, time.perf_counter() - wall
        keys = list(client.scan_iter(f"*{name}/{run}/u0/*"))
        memory = sum(client.memory_usage(k) or 0 for k in keys)
        print(f"{name:<24} {cpu / checks * 1e6:>12.0f} {wall / checks * 1e6:>13.0f} "
              f"{counter.round_trips / checks:>11.2f} {memory:>16}")


if __name__ == "__main__":
    main()
