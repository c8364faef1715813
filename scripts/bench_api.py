"""Benchmark the HTTP API under gunicorn: concurrent users through whole dialogues.

Starts gunicorn with the real app (``si_agent.server.create_app``, plus the two
``/bench`` endpoints below) on a free 127.0.0.1 port (Redis
sessions on a fresh prefix, rule engine, embedded demo backend, a rate limit too high
to matter, counted in Redis as in production). Each simulated user is a thread with
its own ``requests.Session`` (keep-alive) and its own token, and runs the
``social_transfer`` and ``pension_query`` dialogues to ``done`` for ``--rounds``
rounds (or until ``--duration`` seconds have passed). A dialogue that does not end in
``done`` counts as failed. The same users then hit ``GET /healthz`` as many times as
they sent turns: the bare Flask + gunicorn limit on this machine, with the same client.
The client runs on the same machine and takes CPU from the server: compare runs made
the same way, not absolute numbers.

Two more endpoints, served by this benchmark's own app (``create_bench_app``: the
real app plus a ``/bench`` blueprint, never part of the product), show where the
gap to ``/healthz`` comes from, with as many requests as the chat turns:

    POST /bench/auth      the chat route's guard: token check, rate limit, JSON body
    POST /bench/plumbing  a turn without the dialogue: that guard, session load, two
                          history lines, session save, the turn object as JSON

``--repeat N`` measures all four N times, interleaved (chat first, since the others
send as many requests as it did, then the other three in a rotating order), and
prints each round's ratio and the median (this machine's load moves single runs by
several points).

    python scripts/bench_api.py [--users 50] [--workers 2] [--threads 8] [--rounds 10]
                                [--duration SECONDS] [--repeat 1]
                                [--redis-url redis://127.0.0.1:6379/15]
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import redis
import requests

ROOT = Path(__file__).resolve().parents[1]
ZHANG_WEI = "330122196303150178"
DIALOGUES = {
    "social_transfer": ["我要转社保", "从杭州转到苏州", ZHANG_WEI, "张伟", "确认"],
    "pension_query": ["查养老金", ZHANG_WEI],
}
CHAT, PLUMBING, AUTH, HEALTHZ = ("POST /api/chat (dialogues)", "POST /bench/plumbing",
                                 "POST /bench/auth", "GET /healthz (bare Flask)")
ENDPOINTS = {CHAT: "/api/chat", PLUMBING: "/bench/plumbing", AUTH: "/bench/auth",
             HEALTHZ: "/healthz"}
SHORT = {CHAT: "chat", PLUMBING: "plumbing", AUTH: "auth", HEALTHZ: "healthz"}


@dataclass
class Tally:
    """What one user (thread) measured."""

    latencies: list[float] = field(default_factory=list)
    dialogues: int = 0
    failed: int = 0
    errors: int = 0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--users", type=int, default=50, help="concurrent users (threads)")
    ap.add_argument("--workers", type=int, default=2, help="gunicorn worker processes")
    ap.add_argument("--threads", type=int, default=8, help="threads per gunicorn worker")
    ap.add_argument("--rounds", type=int, default=10,
                    help="times each user runs every dialogue (ignored with --duration)")
    ap.add_argument("--duration", type=float, default=None,
                    help="run dialogues for this many seconds instead of --rounds")
    ap.add_argument("--repeat", type=_positive, default=1,
                    help="measure every endpoint this many times, interleaved")
    ap.add_argument("--redis-url", default="redis://127.0.0.1:6379/15")
    args = ap.parse_args()

    run = uuid.uuid4().hex[:10]
    prefix = f"si-bench-api-{run}:"
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    data_dir = Path(tempfile.mkdtemp(prefix="si-bench-api-"))
    server = _start_gunicorn(args, port, data_dir, prefix, app="bench_api:create_bench_app()")
    rows: dict[str, list[Tally]] = {label: [] for label in ENDPOINTS}
    elapsed = dict.fromkeys(ENDPOINTS, 0.0)
    cpu_used = dict.fromkeys(ENDPOINTS, 0.0)
    ratios: list[dict[str, float]] = []
    try:
        _wait_until_up(server, url, data_dir / "gunicorn.log")
        sessions = [_login(url, f"bench-{run}-{i}") for i in range(args.users)]
        _run_dialogues(sessions[0], url, DIALOGUES, rounds=1)  # warm the code paths up
        for path in ("/bench/plumbing", "/bench/auth"):
            _post_many(sessions[0], f"{url}{path}", count=3)
        for round_ in range(args.repeat):
            rates: dict[str, float] = {}
            chat: list[Tally] = []
            others = [label for label in ENDPOINTS if label != CHAT]
            turn = round_ % len(others)
            for label in [CHAT, *others[turn:], *others[:turn]]:
                if label == CHAT:
                    def work(i, s):
                        return _run_dialogues(s, url, DIALOGUES, rounds=args.rounds,
                                              duration=args.duration)
                else:
                    def work(i, s, label=label, chat=chat):
                        count = len(chat[i].latencies)
                        if label == HEALTHZ:
                            return _get_many(s, f"{url}/healthz", count=count)
                        return _post_many(s, f"{url}{ENDPOINTS[label]}", count=count)
                before = server_cpu(server.pid)
                tallies, took = _measure(sessions, work)
                cpu_used[label] += server_cpu(server.pid) - before
                if label == CHAT:
                    chat = tallies
                rows[label].extend(tallies)
                elapsed[label] += took
                rates[label] = sum(len(t.latencies) for t in tallies) / took
            ratios.append({label: rates[label] / rates[HEALTHZ] for label in ENDPOINTS})
    finally:
        _stop(server)
        _delete_keys(args.redis_url, prefix, run)

    shape = (f"gunicorn {args.workers} workers x {args.threads} threads, {args.users} users, "
             + (f"{args.duration:g} s" if args.duration else f"{args.rounds} rounds")
             + (f", {args.repeat} interleaved repeats" if args.repeat > 1 else "")
             + f", {os.cpu_count()} CPUs shared with the client")
    print(f"si_agent API benchmark: {shape}")
    print("Redis sessions and rate-limit counters, rule engine, embedded demo backend\n")
    header = (f"{'endpoint':<28} {'requests':>8} {'dialogues':>9} {'failed':>6} {'errors':>6} "
              f"{'req/s':>8} {'p50 ms':>8} {'p99 ms':>8} {'CPU ms/req':>10} {'vs healthz':>10}")
    print(header)
    print("-" * len(header))
    for label in ENDPOINTS:
        ratio = statistics.median(r[label] for r in ratios)
        _row(label, rows[label], elapsed[label], cpu_used[label], dialogues=label == CHAT,
             ratio=ratio)
    if args.repeat > 1:
        print("\nper repeat (rate / /healthz rate): " + "; ".join(
            ", ".join(f"{SHORT[label]} {r[label]:.1%}" for label in ENDPOINTS if label != HEALTHZ)
            for r in ratios))
    print(f"\nchat turns/s = {statistics.median(r[CHAT] for r in ratios):.1%} of the bare "
          "/healthz rate at the same concurrency" + (" (median)" if args.repeat > 1 else ""))
    print("CPU ms/req: the gunicorn workers' CPU (user + system) per request; vs healthz: "
          "req/s over /healthz's" + (", the median of the rounds' ratios (req/s is over all "
                                    "rounds)" if args.repeat > 1 else ""))
    failed = sum(t.failed + t.errors for tallies in rows.values() for t in tallies)
    if failed:
        sys.exit(1)


# -- The load ---------------------------------------------------------------------------------


def _login(url: str, user_id: str) -> requests.Session:
    session = requests.Session()
    res = session.post(f"{url}/api/token", json={"user_id": user_id}, timeout=30)
    res.raise_for_status()
    session.headers["Authorization"] = f"Bearer {res.json()['access_token']}"
    return session


def _run_dialogues(session: requests.Session, url: str, dialogues: dict[str, list[str]],
                   rounds: int, duration: float | None = None) -> Tally:
    """Each dialogue to its end, ``rounds`` times or until ``duration`` has passed."""
    tally = Tally()
    stop_at = time.perf_counter() + duration if duration else None
    done_rounds = 0
    while (time.perf_counter() < stop_at) if stop_at else done_rounds < rounds:
        for business, messages in dialogues.items():
            last = None
            for message in messages:
                started = time.perf_counter()
                try:
                    res = session.post(f"{url}/api/chat", json={"message": message}, timeout=60)
                except requests.RequestException:
                    res = None
                tally.latencies.append(time.perf_counter() - started)
                if res is None or res.status_code != 200:
                    tally.errors += 1
                    last = None
                    break
                last = res.json()
            tally.dialogues += 1
            if not last or last["state"] != "done" or last["business"]["id"] != business:
                tally.failed += 1
                session.delete(f"{url}/api/session", timeout=60)
        done_rounds += 1
    return tally


def _get_many(session: requests.Session, url: str, count: int) -> Tally:
    return _many(lambda: session.get(url, timeout=60), count)


def _post_many(session: requests.Session, url: str, count: int) -> Tally:
    return _many(lambda: session.post(url, json={"message": "从杭州转到苏州"}, timeout=60), count)


def _many(send, count: int) -> Tally:
    """``send()`` ``count`` times; anything but a 200 is an error."""
    tally = Tally()
    for _ in range(count):
        started = time.perf_counter()
        try:
            ok = send().status_code == 200
        except requests.RequestException:
            ok = False
        tally.latencies.append(time.perf_counter() - started)
        tally.errors += not ok
    return tally


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be 1 or more")
    return value


def _measure(sessions: list[requests.Session], work) -> tuple[list[Tally], float]:
    """Run ``work(i, sessions[i])`` in one thread per session, all started together."""
    tallies: list[Tally] = [Tally() for _ in sessions]
    gate = threading.Barrier(len(sessions) + 1)

    def user(i: int) -> None:
        gate.wait()
        try:
            tallies[i] = work(i, sessions[i])
        except Exception as exc:  # e.g. a 200 that is not the turn object: an error, loudly
            print(f"user {i}: {type(exc).__name__}: {exc}", file=sys.stderr)
            tallies[i] = Tally(errors=1)

    threads = [threading.Thread(target=user, args=(i,)) for i in range(len(sessions))]
    for t in threads:
        t.start()
    gate.wait()
    started = time.perf_counter()
    for t in threads:
        t.join()
    return tallies, time.perf_counter() - started


def _row(label: str, tallies: list[Tally], elapsed: float, cpu: float, dialogues: bool,
         ratio: float) -> None:
    latencies = sorted(x for t in tallies for x in t.latencies)
    q = statistics.quantiles(latencies, n=100) if len(latencies) > 1 else latencies * 99
    rate = len(latencies) / elapsed
    count = str(sum(t.dialogues for t in tallies)) if dialogues else "-"
    failed = str(sum(t.failed for t in tallies)) if dialogues else "-"
    print(f"{label:<28} {len(latencies):>8} {count:>9} {failed:>6} "
          f"{sum(t.errors for t in tallies):>6} {rate:>8.0f} {q[49] * 1000:>8.1f} "
          f"{q[98] * 1000:>8.1f} {cpu / len(latencies) * 1000:>10.2f} {ratio:>10.1%}")


# -- The server -------------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def create_bench_app():
    """The real app plus ``/bench/auth`` and ``/bench/plumbing`` (module docstring)."""
    from flask import Blueprint, Response, current_app, jsonify

    from si_agent.config.settings import Settings
    from si_agent.flow.result import snapshot
    from si_agent.server import create_app
    from si_agent.server.auth import current_user, json_body
    from si_agent.server.identity import rate_key, token_required
    from si_agent.server.ratelimit import RateLimiter

    settings = Settings.from_env()
    app = create_app(settings)
    bench = Blueprint("bench", __name__)

    @bench.post("/bench/auth")
    @token_required
    def auth():
        current_user(), json_body()
        return jsonify(ok=True)

    @bench.post("/bench/plumbing")
    @token_required
    def plumbing():
        controller = current_app.config["SI_CONTROLLER"]
        user, message = current_user(), json_body().get("message", "")
        session = controller.load(user)
        session.remember("user", message)
        session.remember("assistant", "好的")
        controller.store.save(session)
        turn = snapshot(session, controller.catalog, "好的")
        return Response(turn.model_dump_json(), mimetype="application/json")

    RateLimiter(settings.rate_limit, settings.rate_limit_storage, rate_key).init_app(app, bench)
    app.register_blueprint(bench)
    return app


def _start_gunicorn(args: argparse.Namespace, port: int, data_dir: Path,
                    prefix: str, extra: tuple[str, ...] = (),
                    app: str = "si_agent.server:create_app()") -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SI_")}
    env.update(
        PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), str(ROOT / "scripts"),
                                                 os.environ.get("PYTHONPATH")])),
        SI_BUSINESS_DIR=str(ROOT / "businesses"),
        SI_DATA_DIR=str(data_dir),
        SI_SESSION_STORE="redis",
        SI_REDIS_URL=args.redis_url,
        SI_REDIS_PREFIX=prefix,
        SI_ENGINE="rules",
        SI_KNOWLEDGE="none",
        SI_RATE_LIMIT="1000000 per minute",
        SI_RATE_LIMIT_STORAGE=args.redis_url,
        SI_LOG_LEVEL="WARNING",
    )
    command = [sys.executable, "-m", "gunicorn", "--workers", str(args.workers),
               "--threads", str(args.threads), "--bind", f"127.0.0.1:{port}", *extra, app]
    with (data_dir / "gunicorn.log").open("wb") as log:
        return subprocess.Popen(command, cwd=ROOT, env=env, stdout=log,
                                stderr=subprocess.STDOUT, start_new_session=True)


def server_cpu(master: int) -> float:
    """CPU seconds (user + system) used so far by the gunicorn master's worker processes."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for pid in worker_pids(master):
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:  # a worker that just exited
            continue
        total += (int(fields[11]) + int(fields[12])) / tick  # utime, stime
    return total


def worker_pids(master: int) -> list[int]:
    """The pids of the gunicorn master's child processes (its workers), from /proc."""
    try:
        children = Path(f"/proc/{master}/task/{master}/children").read_text().split()
    except OSError:
        return []
    return [int(pid) for pid in children]


def _wait_until_up(server: subprocess.Popen, url: str, log: Path) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if server.poll() is not None:
            sys.exit(f"gunicorn exited with {server.returncode}:\n{log.read_text()}")
        try:
            if requests.get(f"{url}/readyz", timeout=1).status_code == 200:
                return
        except requests.RequestException:  # not listening yet, or the workers still boot
            pass
        time.sleep(0.1)
    sys.exit(f"gunicorn did not answer within 30 s:\n{log.read_text()}")


def _stop(server: subprocess.Popen) -> None:
    if server.poll() is None:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait(timeout=5)


def _delete_keys(redis_url: str, prefix: str, run: str) -> None:
    client = redis.Redis.from_url(redis_url)
    keys = [*client.scan_iter(f"{prefix}*"), *client.scan_iter(f"LIMITS:*user:bench-{run}-*")]
    if keys:
        client.delete(*keys)


if __name__ == "__main__":
    main()
