"""Fault injection with real processes: the helpers every fault test shares.

- ``spawn(command, env, log, ready)``: start a process in its own process group,
  its output in ``log``, and wait until ``ready()`` says it serves (``free_port`` and
  ``stop`` come from ``si_agent.testing.processes``);
- the ``redis_server`` fixture: a started ``si_agent.testing.processes.RedisServer``
  (a test-owned ``redis-server`` on a free port with AOF on, which a test can
  ``kill()`` and ``start()`` again on the same port and directory);
- ``ApiServer`` / the ``api_server`` fixture: the real API (``create_app``) under
  gunicorn in a subprocess, configured by ``SI_*`` variables, spoken to over HTTP;
- ``demo_counts(data_dir, business_id)``: the applications and submission calls the
  embedded demo backend recorded (its SQLite file), to count lost or duplicate
  submissions.

Nothing here is mocked: the servers are the programs production runs.
"""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import requests  # the test extra

from si_agent.testing.processes import RedisServer, api_env, free_port, stop

ROOT = Path(__file__).resolve().parents[2]
START_TIMEOUT = 60.0  # seconds for a process to start serving (2 CPUs shared by many)


def spawn(command: list[str], env: dict[str, str], log: Path,
          ready: Callable[[], bool]) -> subprocess.Popen:
    """Start ``command`` (own process group, output to ``log``); wait until ``ready()``."""
    with log.open("ab") as out:
        process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=out,
                                   stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"{command[0]} exited with {process.returncode}:\n{_tail(log)}")
        if ready():
            return process
        time.sleep(0.1)
    stop(process)
    pytest.fail(f"{' '.join(command[:3])} did not become ready in {START_TIMEOUT} s:\n"
                f"{_tail(log)}")


def _tail(log: Path, chars: int = 4000) -> str:
    return log.read_text(encoding="utf-8", errors="replace")[-chars:] if log.exists() else ""


# -- redis-server ------------------------------------------------------------------------


@pytest.fixture
def redis_server(tmp_path) -> Iterator[RedisServer]:
    """A started test-owned ``redis-server`` (skips when the program is not installed)."""
    server = stopped_redis_server(tmp_path)
    server.start()
    try:
        yield server
    finally:
        server.close()


def stopped_redis_server(tmp_path: Path) -> RedisServer:
    """A ``RedisServer`` with its port chosen but not started (skips without redis-server)."""
    if shutil.which("redis-server") is None:
        pytest.skip("redis-server is not installed (apt-get install redis-server)")
    pytest.importorskip("redis")
    directory = tmp_path / "redis"
    directory.mkdir()
    return RedisServer(directory)


# -- the API under gunicorn ------------------------------------------------------------------


@dataclass
class ApiServer:
    """A running API process and the HTTP calls a citizen's client makes."""

    url: str
    process: subprocess.Popen
    data_dir: Path
    log: Path
    users: list[str] = field(default_factory=list)

    def token(self, name: str = "citizen") -> dict[str, str]:
        """A dev token for a new user: the ``Authorization`` header."""
        user = f"{name}-{uuid.uuid4().hex[:12]}"
        self.users.append(user)
        res = requests.post(f"{self.url}/api/token", json={"user_id": user}, timeout=30)
        assert res.status_code == 200, res.text
        return {"Authorization": f"Bearer {res.json()['access_token']}"}

    def chat(self, headers: dict[str, str], message: str, **kw) -> requests.Response:
        return requests.post(f"{self.url}/api/chat", json={"message": message},
                             headers=headers, timeout=60, **kw)

    def session(self, headers: dict[str, str]) -> requests.Response:
        return requests.get(f"{self.url}/api/session", headers=headers, timeout=60)

    def get(self, path: str, **kw) -> requests.Response:
        return requests.get(f"{self.url}{path}", timeout=60, **kw)

    def log_text(self) -> str:
        return _tail(self.log, 200_000)


def start_api(data_dir: Path, *, workers: int = 2, threads: int = 4,
              **settings: str) -> ApiServer:
    """gunicorn serving ``si_agent.server:create_app()`` with ``api_env(data_dir, **settings)``."""
    pytest.importorskip("gunicorn")
    data_dir.mkdir(parents=True, exist_ok=True)
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log = data_dir / "gunicorn.log"
    command = [sys.executable, "-m", "gunicorn", "--workers", str(workers),
               "--threads", str(threads), "--bind", f"127.0.0.1:{port}", "--timeout", "120",
               "si_agent.server:create_app()"]

    def ready() -> bool:
        try:
            return requests.get(f"{url}/healthz", timeout=1).status_code == 200
        except requests.RequestException:
            return False

    process = spawn(command, api_env(data_dir, **settings), log, ready)
    return ApiServer(url, process, data_dir, log)


@pytest.fixture
def api_server(tmp_path) -> Iterator[Callable[..., ApiServer]]:
    """``api_server(**settings)`` starts an API process; every one is stopped afterwards."""
    started: list[ApiServer] = []

    def start(*, data_dir: Path | None = None, **kw) -> ApiServer:
        server = start_api(data_dir or tmp_path / f"api{len(started)}", **kw)
        started.append(server)
        return server

    try:
        yield start
    finally:
        for server in started:
            stop(server.process)


# -- the demo backend's records ------------------------------------------------------------


def demo_counts(data_dir: Path, business_id: str) -> dict[str, int]:
    """What the embedded demo backend (its SQLite file under ``data_dir``) recorded for
    ``business_id``: ``applications`` created by submissions (one idempotency record
    each; the seeded demo applications are not counted) and submission ``calls``
    (every POST, replays and refusals included). Zeros when it was never called."""
    path = data_dir / "demo_backend.db"
    if not path.exists():
        return {"applications": 0, "calls": 0}
    with sqlite3.connect(path) as db:
        applications = db.execute("SELECT COUNT(*) FROM idempotency WHERE business_id = ?",
                                  (business_id,)).fetchone()[0]
        calls = db.execute("SELECT COUNT(*) FROM calls WHERE business_id = ?",
                           (business_id,)).fetchone()[0]
    return {"applications": applications, "calls": calls}
