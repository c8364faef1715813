"""Parts of the system in their own processes, for tests and benchmarks.

    with demo_portal(data_dir) as url:          # si-agent portal on a free port
        ...
    worker = start_cli(env, "worker")           # any si-agent command, in its own group
    with served_api(env, user="u1") as client:  # si-agent serve, a client with a token
        ...
    stop(worker)
    redis = RedisServer(tmp_dir); redis.start() # a redis-server to kill and restart
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import httpx

PORTAL_USER, PORTAL_PASSWORD = "demo", "demo123"
ROOT = Path(__file__).resolve().parents[2]  # the checkout (its businesses/ folder)


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until_up(url: str, proc: subprocess.Popen, timeout: float = 20.0) -> None:
    """Return once ``url`` answers; raise if ``proc`` exits or ``timeout`` passes first."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{url} exited with {proc.returncode}")
        try:
            httpx.get(url, timeout=1.0)
            return
        except httpx.HTTPError:
            time.sleep(0.1)
    raise RuntimeError(f"{url} did not come up")


def start_cli(env: Mapping[str, str], *args: str, log: Path | None = None) -> subprocess.Popen:
    """``si-agent <args>`` in a new process group (``stop`` ends the group)."""
    out = open(log, "ab") if log else subprocess.DEVNULL  # noqa: SIM115 (the child owns it)
    try:
        return subprocess.Popen([sys.executable, "-m", "si_agent.cli", *args], env=dict(env),
                                stdout=out, stderr=out, start_new_session=True)
    finally:
        if log:
            out.close()


def api_env(data_dir: Path, **settings: str) -> dict[str, str]:
    """The environment of an API process: no ``SI_*`` from outside, dev auth, the
    checkout's businesses, the rules engine, no knowledge base, memory sessions, plus
    ``settings`` (``session_ttl="2"`` sets ``SI_SESSION_TTL``)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SI_")}
    env.update(
        PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
        SI_AUTH_MODE="dev",
        SI_BUSINESS_DIR=str(ROOT / "businesses"),
        SI_DATA_DIR=str(data_dir),
        SI_ENGINE="rules",
        SI_KNOWLEDGE="none",
        SI_SESSION_STORE="memory",
        SI_RATE_LIMIT="1000 per minute",
        SI_LOG_LEVEL="WARNING",
    )
    env.update({f"SI_{k.upper()}": v for k, v in settings.items()})
    return env


@contextmanager
def served_api(env: Mapping[str, str], *, user: str, log: Path | None = None,
               timeout: float = 60.0, client_timeout: float = 30.0) -> Iterator[httpx.Client]:
    """``si-agent serve`` with ``env`` on a free port, and a client holding a dev token
    for ``user``; the server is stopped on the way out."""
    port = free_port()
    proc = start_cli(env, "serve", "--port", str(port), log=log)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_up(url + "/healthz", proc, timeout=timeout)
        with httpx.Client(base_url=url, timeout=client_timeout) as client:
            token = client.post("/api/token", json={"user_id": user}).json()["access_token"]
            client.headers["Authorization"] = f"Bearer {token}"
            yield client
    finally:
        stop(proc)


def stop(proc: subprocess.Popen, sig: int = signal.SIGTERM, timeout: float = 20.0) -> None:
    """Signal ``proc``'s process group (if it still runs) and wait for it; a group
    that outlives ``timeout`` is killed (SIGKILL)."""
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            pass
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(5)


class RedisServer:
    """A ``redis-server`` of one test's own on a free port, killable (a crash) and
    restartable on the same port and directory. With ``persist`` (AOF, ``appendfsync
    always``) a restart brings the data back; without, it starts empty."""

    def __init__(self, directory: Path, *, persist: bool = True) -> None:
        self.directory = directory
        self.persist = persist
        self.port = free_port()
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def client(self):
        import redis

        return redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=2)

    def start(self, timeout: float = 60.0) -> None:
        """Start (or restart) and return once it answers PING."""
        aof = ["--appendonly", "yes", "--appendfsync", "always"] if self.persist else [
            "--appendonly", "no"]
        with (self.directory / "redis.log").open("ab") as log:
            self.process = subprocess.Popen(
                ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1",
                 "--dir", str(self.directory), *aof, "--save", "", "--protected-mode", "no"],
                stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + timeout
        while not self.ping():
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.close()
                raise RuntimeError(f"redis-server on port {self.port} did not start: "
                                   f"see {self.directory / 'redis.log'}")
            time.sleep(0.05)

    def ping(self) -> bool:
        try:
            with self.client() as client:
                return bool(client.ping())
        except Exception:  # noqa: BLE001 - any failure means "not serving (yet)"
            return False

    def kill(self) -> None:
        """SIGKILL: no shutdown save, connections drop at once (what a crash does)."""
        assert self.process is not None
        stop(self.process, signal.SIGKILL)
        self.process = None

    def close(self) -> None:
        if self.process is not None:
            stop(self.process)
            self.process = None


@contextmanager
def demo_portal(data_dir: Path, *, user: str = PORTAL_USER,
                password: str = PORTAL_PASSWORD) -> Iterator[str]:
    """The demo portal (``si-agent portal``) on a free port with its data in
    ``data_dir``; yields its base URL."""
    port = free_port()
    env = {**os.environ, "SI_DATA_DIR": str(data_dir), "SI_PORTAL_USER": user,
           "SI_PORTAL_PASSWORD": password}
    proc = start_cli(env, "portal", "--port", str(port))
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_up(url + "/login", proc)
        yield url
    finally:
        stop(proc, timeout=10)
