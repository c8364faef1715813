"""Parts of the system in their own processes, for tests and benchmarks.

    with demo_portal(data_dir) as url:          # si-agent portal on a free port
        ...
    worker = start_cli(env, "worker")           # any si-agent command, in its own group
    stop(worker)
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


def stop(proc: subprocess.Popen, sig: int = signal.SIGTERM, timeout: float = 20.0) -> None:
    """Signal ``proc``'s process group (if it still runs) and wait for it."""
    if proc.poll() is None:
        os.killpg(proc.pid, sig)
        proc.wait(timeout)


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
