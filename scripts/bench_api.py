"""Benchmark the HTTP API under gunicorn: concurrent citizens through whole dialogues.

Starts gunicorn with the real app (``si_agent.server.create_app``, plus the two
``/bench`` endpoints below) on a free 127.0.0.1 port (Redis sessions on a fresh
prefix, rule engine, embedded demo backend, SI_KNOWLEDGE=none, a rate limit too
high to matter, counted in Redis as in production), and drives it with **wrk**
(the Debian package; ``apt-get install wrk``) and ``scripts/wrk_dialogue.lua``: wrk
runs one thread per connection, and every connection is one citizen with a token
of its own (so a session of its own) that sends the turns of the ``social_transfer``
and ``pension_query`` dialogues in order, then starts again as a new citizen. A
dialogue whose last turn does not answer ``done`` in its business counts as failed,
and so does any non-2xx answer. The same number of connections then send
``GET /healthz`` (the bare Flask + gunicorn cost) for as long, and the table gives,
per endpoint, req/s, p50/p99 latency and the **server CPU per request**: the
gunicorn workers' user + system CPU (from /proc) over the run, divided by its
requests. wrk takes far less CPU than the server, but runs on the same machine:
compare runs made the same way; CPU per request is the steadier figure.

Without wrk on PATH (or with ``--client python``) the load comes from Python
threads, one ``requests.Session`` per user, as before: the script says so, and those
threads cap ``/healthz`` itself (about 700 req/s here, against 2,600 with wrk).

Two more endpoints, served by this benchmark's own app (``create_bench_app``: the
real app plus a ``/bench`` blueprint, never part of the product), show where the
gap to ``/healthz`` comes from:

    POST /bench/auth      the chat route's guard: token check, rate limit, JSON body
    POST /bench/plumbing  a turn without the dialogue: that guard, session load, two
                          history lines, session save, the turn object as JSON

``--repeat N`` measures every endpoint N times, interleaved (chat first, then the
others in a rotating order), and prints each round's figures. The Redis keys the run
made (sessions, jobs, audit, rate-limit counters) are deleted at the end, also after a
failure or Ctrl-C.

    python scripts/bench_api.py [--users 50] [--workers 2] [--threads 8] [--duration 20]
                                [--repeat 1] [--endpoints chat,healthz,auth,plumbing]
                                [--client wrk|python] [--redis-url redis://127.0.0.1:6379/15]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import redis
import requests

ROOT = Path(__file__).resolve().parents[1]
WRK_SCRIPT = ROOT / "scripts" / "wrk_dialogue.lua"
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
WRK_MODE = {CHAT: "dialogue", PLUMBING: "post:/bench/plumbing", AUTH: "post:/bench/auth",
            HEALTHZ: "get:/healthz"}
# Citizens in a wrk chat run's plan: enough for this many turns a second (the rest wrap).
MAX_TURNS_PER_SECOND = 1500


@dataclass
class Tally:
    """What one user (thread) measured."""

    latencies: list[float] = field(default_factory=list)
    dialogues: int = 0
    failed: int = 0
    errors: int = 0


@dataclass
class Measured:
    """One endpoint's run: its requests, their latencies, the workers' CPU meanwhile."""

    requests: int
    seconds: float
    cpu: float
    p50: float  # ms
    p99: float  # ms
    errors: int = 0  # non-2xx answers and socket errors
    dialogues: int = 0
    failed: int = 0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--users", type=int, default=50,
                    help="concurrent users: wrk connections (or Python threads) (default 50)")
    ap.add_argument("--workers", type=int, default=2,
                    help="gunicorn worker processes (default 2)")
    ap.add_argument("--threads", type=int, default=8,
                    help="threads per gunicorn worker (default 8)")
    ap.add_argument("--duration", type=float, default=None,
                    help="seconds per endpoint and round (default 20 with wrk; with the "
                         "Python client, --rounds)")
    ap.add_argument("--rounds", type=int, default=10,
                    help="Python client only: times each user runs every dialogue, "
                         "unless --duration is given (default 10)")
    ap.add_argument("--repeat", type=_positive, default=1,
                    help="measure every endpoint this many times, interleaved (default 1)")
    ap.add_argument("--endpoints", default="chat,healthz,auth,plumbing",
                    help="which endpoints, comma-separated, of chat, healthz, auth, plumbing "
                         "(default all four)")
    ap.add_argument("--client", choices=("wrk", "python"), default=None,
                    help="load generator (default wrk when it is installed, else python)")
    ap.add_argument("--redis-url", default="redis://127.0.0.1:6379/15",
                    help="Redis for sessions and counters; the run's keys are deleted at the "
                         "end (default redis://127.0.0.1:6379/15)")
    args = ap.parse_args()
    by_short = {v: k for k, v in SHORT.items()}
    try:
        labels = [by_short[name.strip()] for name in args.endpoints.split(",") if name.strip()]
    except KeyError as exc:
        ap.error(f"unknown endpoint {exc}; choose from {', '.join(SHORT.values())}")
    labels = [label for label in ENDPOINTS if label in labels]  # chat first
    wrk = shutil.which("wrk")
    client = args.client or ("wrk" if wrk else "python")
    if client == "wrk" and not wrk:
        sys.exit("wrk is not installed (apt-get install wrk), or use --client python")
    if client == "python":
        print("note: " + ("wrk is not installed (apt-get install wrk): " if not wrk else "")
              + "the load comes from Python client threads, which cap /healthz itself",
              file=sys.stderr)
    duration = args.duration if args.duration or client == "python" else 20.0

    run = uuid.uuid4().hex[:10]
    prefix = f"si-bench-api-{run}:"
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    data_dir = Path(tempfile.mkdtemp(prefix="si-bench-api-"))
    rows: dict[str, list[Measured]] = {label: [] for label in labels}
    server = None
    try:
        server = _start_gunicorn(args, port, data_dir, prefix, app="bench_api:create_bench_app()")
        _wait_until_up(server, url, data_dir / "gunicorn.log")
        wait_until_idle(server.pid)  # every worker has loaded the app, not only the first
        warm = _login(url, f"bench-{run}-warm")
        _run_dialogues(warm, url, DIALOGUES, rounds=2)  # warm the code paths up
        for path in ("/bench/plumbing", "/bench/auth"):
            _post_many(warm, f"{url}{path}", count=3)
        measure = (_wrk_measure(url, data_dir, run, args.users, duration, server.pid)
                   if client == "wrk" else
                   _python_measure(url, run, args, duration, server.pid))
        others = [label for label in labels if label != CHAT]
        for round_ in range(args.repeat):
            turn = round_ % len(others) if others else 0
            order = ([CHAT] if CHAT in labels else []) + others[turn:] + others[:turn]
            for label in order:
                rows[label].append(measure(label, round_))
    finally:
        if server is not None:
            _stop(server)
        left = delete_keys(args.redis_url, prefix, run)
        shutil.rmtree(data_dir, ignore_errors=True)
    _print_table(args, client, duration, labels, rows)
    print(f"Redis keys of the run (prefix {prefix}, rate-limit counters of bench-{run}-*): "
          + (f"{left} left behind" if left else "deleted"))
    if left:
        sys.exit(1)
    if any(m.errors or m.failed for runs in rows.values() for m in runs):
        sys.exit(1)


def _print_table(args, client: str, duration: float | None, labels: list[str],
                 rows: dict[str, list[Measured]]) -> None:
    shape = (f"gunicorn {args.workers} workers x {args.threads} threads, {args.users} users, "
             + (f"{duration:g} s per endpoint" if duration else f"{args.rounds} rounds")
             + (f", {args.repeat} interleaved repeats" if args.repeat > 1 else "")
             + f", {os.cpu_count()} CPUs shared with the client")
    load = ("wrk (scripts/wrk_dialogue.lua, one thread and one citizen per connection)"
            if client == "wrk" else "Python client threads (requests)")
    print(f"si_agent API benchmark: {shape}")
    print(f"load: {load}")
    print("Redis sessions and rate-limit counters, rule engine, embedded demo backend, "
          "SI_KNOWLEDGE=none\n")
    header = (f"{'endpoint':<28} {'requests':>8} {'dialogues':>9} {'failed':>6} {'errors':>6} "
              f"{'req/s':>8} {'p50 ms':>8} {'p99 ms':>8} {'CPU ms/req':>10}")
    print(header)
    print("-" * len(header))
    for label in labels:
        runs = rows[label]
        requests_ = sum(m.requests for m in runs)
        dialogues = str(sum(m.dialogues for m in runs)) if label == CHAT else "-"
        failed = str(sum(m.failed for m in runs)) if label == CHAT else "-"
        cpu = sum(m.cpu for m in runs) / max(requests_, 1) * 1000
        print(f"{label:<28} {requests_:>8} {dialogues:>9} {failed:>6} "
              f"{sum(m.errors for m in runs):>6} "
              f"{requests_ / sum(m.seconds for m in runs):>8.0f} "
              f"{statistics.median(m.p50 for m in runs):>8.1f} "
              f"{statistics.median(m.p99 for m in runs):>8.1f} {cpu:>10.2f}")
    if args.repeat > 1:
        print("\nper repeat (CPU ms/req, req/s, p99 ms):")
        for i in range(args.repeat):
            print(f"  {i + 1}: " + "; ".join(
                f"{SHORT[label]} {rows[label][i].cpu / max(rows[label][i].requests, 1) * 1000:.2f}"
                f", {rows[label][i].requests / rows[label][i].seconds:.0f}"
                f", {rows[label][i].p99:.1f}" for label in labels))
    print("\nCPU ms/req: the gunicorn workers' CPU (user + system, /proc) over the run, per "
          "request; p50/p99: the median over the repeats; errors: non-2xx answers and socket "
          "errors")


# -- The load generators ----------------------------------------------------------------------


def _wrk_measure(url: str, data_dir: Path, run: str, users: int, duration: float, master: int):
    """A ``measure(label, round)`` that runs wrk with scripts/wrk_dialogue.lua."""
    auth_tokens = _tokens(url, [f"bench-{run}-fixed-{i}" for i in range(users)])

    def measure(label: str, round_: int) -> Measured:
        if label == CHAT:  # new citizens for every chat run: each starts a new session
            needed = users + math.ceil(duration * MAX_TURNS_PER_SECOND / _turns_per_round())
            tokens = _tokens(url, [f"bench-{run}-r{round_}-{i}" for i in range(needed)])
        else:
            tokens = auth_tokens
        plan = data_dir / f"plan-{round_}-{SHORT[label]}.tsv"
        lines = [("D", business, *messages) for business, messages in DIALOGUES.items()]
        lines += [("T", token) for token in tokens]
        plan.write_text("".join("\t".join(line) + "\n" for line in lines), encoding="utf-8")
        command = ["wrk", "--threads", str(users), "--connections", str(users),
                   "--duration", f"{duration:g}s", "--timeout", "30s",
                   "--script", str(WRK_SCRIPT), url, "--", str(plan), WRK_MODE[label],
                   str(users)]
        before = server_cpu(master)
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        cpu = server_cpu(master) - before
        result = next((json.loads(line.removeprefix("WRK_RESULT "))
                       for line in done.stdout.splitlines() if line.startswith("WRK_RESULT ")),
                      None)
        if done.returncode or result is None:
            raise RuntimeError(f"wrk failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
        return Measured(requests=result["requests"], seconds=result["seconds"], cpu=cpu,
                        p50=result["p50_ms"], p99=result["p99_ms"],
                        errors=result["non2xx"] + result["socket_errors"] + result["timeouts"],
                        dialogues=result["dialogues"], failed=result["failed"])

    return measure


def _turns_per_round() -> int:
    return sum(len(messages) for messages in DIALOGUES.values())


def _tokens(url: str, user_ids: list[str]) -> list[str]:
    """Access tokens from ``POST /api/token``, one per user id (eight requests at a time)."""
    local = threading.local()

    def token(user_id: str) -> str:
        if not hasattr(local, "session"):
            local.session = requests.Session()
        res = local.session.post(f"{url}/api/token", json={"user_id": user_id}, timeout=30)
        res.raise_for_status()
        return res.json()["access_token"]

    with ThreadPoolExecutor(8) as pool:
        return list(pool.map(token, user_ids))


def _python_measure(url: str, run: str, args, duration: float | None, master: int):
    """A ``measure(label, round)`` with one Python thread (``requests``) per user."""
    sessions = [_login(url, f"bench-{run}-{i}") for i in range(args.users)]
    chat: list[Tally] = []

    def measure(label: str, round_: int) -> Measured:
        nonlocal chat
        if label == CHAT:
            def work(i, s):
                return _run_dialogues(s, url, DIALOGUES, rounds=args.rounds, duration=duration)
        else:
            counts = [len(t.latencies) for t in chat] or [args.rounds * _turns_per_round()] * len(
                sessions)

            def work(i, s, label=label):
                if label == HEALTHZ:
                    return _get_many(s, f"{url}/healthz", count=counts[i])
                return _post_many(s, f"{url}{ENDPOINTS[label]}", count=counts[i])
        before = server_cpu(master)
        tallies, took = _measure(sessions, work)
        cpu = server_cpu(master) - before
        if label == CHAT:
            chat = tallies
        latencies = sorted(x for t in tallies for x in t.latencies)
        q = statistics.quantiles(latencies, n=100) if len(latencies) > 1 else latencies * 99
        return Measured(requests=len(latencies), seconds=took, cpu=cpu, p50=q[49] * 1000,
                        p99=q[98] * 1000, errors=sum(t.errors for t in tallies),
                        dialogues=sum(t.dialogues for t in tallies),
                        failed=sum(t.failed for t in tallies))

    return measure


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


def wait_until_idle(master: int, timeout: float = 60.0) -> None:
    """Wait until the workers use no CPU for a moment: /readyz answers as soon as one
    worker is up, while the others may still be loading the app (seconds of CPU that
    would count against the first endpoint measured)."""
    deadline = time.monotonic() + timeout
    last = server_cpu(master)
    while time.monotonic() < deadline:
        time.sleep(0.5)
        now = server_cpu(master)
        if now - last < 0.02:
            return
        last = now


def _stop(server: subprocess.Popen) -> None:
    if server.poll() is None:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait(timeout=5)


def delete_keys(redis_url: str, prefix: str, run: str) -> int:
    """Delete the run's keys (its prefix, and the rate-limit counters of its users); return
    how many of them are still there afterwards (0 unless something wrote meanwhile)."""
    client = redis.Redis.from_url(redis_url)
    patterns = (f"{prefix}*", f"LIMITS:*bench-{run}-*")
    for pattern in patterns:
        batch: list[bytes] = []
        for key in client.scan_iter(pattern, count=1000):
            batch.append(key)
            if len(batch) >= 1000:
                client.delete(*batch)
                batch.clear()
        if batch:
            client.delete(*batch)
    return sum(1 for pattern in patterns for _ in client.scan_iter(pattern, count=1000))


if __name__ == "__main__":
    main()
