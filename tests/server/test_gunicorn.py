"""The API in production shape: gunicorn, 2 workers with threads, sessions and limits in Redis.

Each server is a real subprocess on a free 127.0.0.1 port, once over HTTP and once
over HTTPS (a self-signed certificate made here, trusted as its own CA). Over real
HTTP: a dev token, a whole ``social_transfer`` dialogue whose turns land on both
workers, an SSE turn read event by event, and a rate limit that holds across the
workers. ``si-agent serve --cert --key`` is checked over HTTPS once.

The access log records the worker pid of every request (``%(p)s``), so the tests can
tell which worker served what. Processes and Redis keys are removed afterwards.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import json
import os
import re
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from si_agent.testing.processes import api_env, free_port

pytest.importorskip("gunicorn")
requests = pytest.importorskip("requests")
redis = pytest.importorskip("redis")

pytestmark = pytest.mark.redis

ROOT = Path(__file__).resolve().parents[2]
REDIS_URL = os.environ.get("SI_TEST_REDIS_URL", "redis://127.0.0.1:6379/15")
RATE_LIMIT = 30  # per user and minute; the dialogue and SSE users stay well below it
ZHANG_WEI = "330122196303150178"
TRANSFER = [("我要转社保", "collecting"), ("从杭州转到苏州", "collecting"),
            (ZHANG_WEI, "collecting"), ("张伟", "confirming"), ("确认", "done")]
ACCESS_LOG_FORMAT = "%(p)s %(m)s %(U)s %(q)s %(s)s"


@dataclass
class Server:
    """A running server: where it answers, how to trust it, and its logs."""

    url: str
    verify: str | bool
    process: subprocess.Popen
    log: Path
    access_log: Path | None = None
    users: list[str] = field(default_factory=list)

    def token(self, name: str) -> dict[str, str]:
        user = f"{name}-{uuid.uuid4().hex[:12]}"
        self.users.append(user)
        res = requests.post(f"{self.url}/api/token", json={"user_id": user}, verify=self.verify,
                            timeout=10)
        assert res.status_code == 200, res.text
        return {"Authorization": f"Bearer {res.json()['access_token']}"}

    def chat(self, headers: dict[str, str], message: str, tag: str = "") -> requests.Response:
        """One turn on a fresh connection (no keep-alive), so turns spread over the workers."""
        return requests.post(f"{self.url}/api/chat?tag={tag}", json={"message": message},
                             headers={**headers, "Connection": "close"}, verify=self.verify,
                             timeout=10)

    def workers_by_tag(self, prefix: str) -> dict[str, str]:
        """``tag -> worker pid`` for the requests tagged ``prefix...`` (from the access log)."""
        assert self.access_log is not None
        served: dict[str, str] = {}
        for line in self.access_log.read_text(encoding="utf-8").splitlines():
            pid, _method, _path, query, _status = (line.split(" ") + [""] * 5)[:5]
            if query.startswith(f"tag={prefix}"):
                served[query.removeprefix("tag=")] = pid
        return served


# -- Fixtures ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tls_files(tmp_path_factory) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1/localhost that is also its own CA."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "si-agent test")])
    now = dt.datetime.now(dt.timezone.utc)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name).issuer_name(name).public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5)).not_valid_after(now + dt.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([
            x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    folder = tmp_path_factory.mktemp("tls")
    cert_path, key_path = folder / "cert.pem", folder / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                           serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return cert_path, key_path


@pytest.fixture(scope="module")
def redis_client():
    client = redis.Redis.from_url(REDIS_URL)
    try:
        client.ping()
    except redis.exceptions.ConnectionError:
        if os.environ.get("SI_SKIP_REDIS") == "1":
            pytest.skip(f"no Redis at {REDIS_URL} (SI_SKIP_REDIS=1)")
        pytest.fail(f"no Redis at {REDIS_URL}: start redis-server (scripts/test.sh does)")
    yield client
    client.close()


def _server_env(data_dir: Path, redis_prefix: str) -> dict[str, str]:
    return api_env(data_dir, session_store="redis", redis_url=REDIS_URL, redis_prefix=redis_prefix,
                   rate_limit=f"{RATE_LIMIT} per minute", rate_limit_storage=REDIS_URL)


def _start(command: list[str], env: dict[str, str], log: Path, url: str,
           verify: str | bool) -> subprocess.Popen:
    """Start ``command`` and wait until ``url/healthz`` answers."""
    with log.open("wb") as out:
        process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=out,
                                   stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"{command[2]} exited with {process.returncode}:\n{log.read_text()}")
        try:
            if requests.get(f"{url}/healthz", verify=verify, timeout=1).status_code == 200:
                return process
        except requests.RequestException:  # not listening yet, or the workers still boot
            pass
        time.sleep(0.1)
    _stop(process)
    pytest.fail(f"no answer from {url}/healthz in 30 s:\n{log.read_text()}")


def _stop(process: subprocess.Popen) -> None:
    """Stop the process group (gunicorn's master and workers) gracefully, then firmly."""
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=5)


def _delete_keys(client, server: Server, redis_prefix: str) -> None:
    keys = list(client.scan_iter(f"{redis_prefix}*"))
    for user in server.users:  # rate-limit counters: LIMITS:LIMITER/user:<id>/...
        keys += client.scan_iter(f"LIMITS:*user:{user}/*")
    if keys:
        client.delete(*keys)


@pytest.fixture(scope="module", params=["http", "https"])
def gunicorn_server(request, tmp_path_factory, tls_files, redis_client) -> Iterator[Server]:
    scheme = request.param
    folder = tmp_path_factory.mktemp(f"gunicorn-{scheme}")
    port = free_port()
    redis_prefix = f"si-gunicorn-test-{uuid.uuid4().hex}:"
    access_log = folder / "access.log"
    command = [sys.executable, "-m", "gunicorn", "--workers", "2", "--threads", "8",
               "--bind", f"127.0.0.1:{port}",
               "--access-logfile", str(access_log), "--access-logformat", ACCESS_LOG_FORMAT]
    verify: str | bool = True
    if scheme == "https":
        cert, key = tls_files
        command += ["--certfile", str(cert), "--keyfile", str(key)]
        verify = str(cert)
    command.append("si_agent.server:create_app()")
    url = f"{scheme}://127.0.0.1:{port}"
    process = _start(command, _server_env(folder, redis_prefix), folder / "gunicorn.log", url,
                     verify)
    server = Server(url, verify, process, folder / "gunicorn.log", access_log)
    try:
        yield server
    finally:
        _stop(process)
        _delete_keys(redis_client, server, redis_prefix)


# -- gunicorn --------------------------------------------------------------------------------


def test_dialogue_shares_the_redis_session_across_workers(gunicorn_server):
    server = gunicorn_server
    headers = server.token("transfer")
    run = uuid.uuid4().hex[:8]
    turns = []
    for i, (message, state) in enumerate(TRANSFER):
        res = server.chat(headers, message, tag=f"{run}-turn{i}")
        assert res.status_code == 200, res.text
        turn = res.json()
        assert (turn["state"], turn["turn"]) == (state, i + 1), turn
        turns.append(turn)
    assert turns[-1]["business"] == {"id": "social_transfer", "name": "社保关系转移"}
    assert turns[-1]["result"]["application_no"] in turns[-1]["reply"]
    assert ZHANG_WEI not in json.dumps(turns, ensure_ascii=False)

    # Read the finished session until both workers have answered: each must see it.
    for i in range(100):
        res = requests.get(f"{server.url}/api/session?tag={run}-read{i}",
                           headers={**headers, "Connection": "close"}, verify=server.verify,
                           timeout=10)
        assert res.json()["state"] == "done" and res.json()["turn"] == len(TRANSFER)
        if len(set(_served(server, run).values())) == 2:
            break
    workers = _served(server, run)
    assert len(set(workers.values())) == 2, f"one worker served everything: {workers}"


def _served(server: Server, run: str) -> dict[str, str]:
    time.sleep(0.05)  # the access log line is written after the response
    return server.workers_by_tag(run)


def test_sse_turn_is_read_event_by_event(gunicorn_server):
    server = gunicorn_server
    headers = {**server.token("stream"), "Accept": "text/event-stream"}
    with requests.post(f"{server.url}/api/chat", json={"message": "我要转社保"}, headers=headers,
                       verify=server.verify, stream=True, timeout=10) as res:
        assert res.status_code == 200
        assert res.headers["Content-Type"].startswith("text/event-stream")
        assert "Content-Length" not in res.headers  # streamed, not buffered
        events = list(_sse_events(res))
    names = [name for name, _ in events]
    assert names[-1] == "turn" and set(names[:-1]) == {"delta"} and len(names) > 4
    turn = events[-1][1]
    assert turn["state"] == "collecting" and turn["business"]["id"] == "social_transfer"
    assert "".join(data["text"] for _, data in events[:-1]) == turn["reply"]


def _sse_events(res: requests.Response) -> Iterator[tuple[str, dict]]:
    """Yield ``(event, data)`` as each event arrives on the open response."""
    name, data = None, None
    for line in res.iter_lines(decode_unicode=True):
        if line.startswith("event: "):
            name = line.removeprefix("event: ")
        elif line.startswith("data: "):
            data = json.loads(line.removeprefix("data: "))
        elif line == "" and name is not None:
            yield name, data
            name, data = None, None


def test_two_concurrent_confirms_submit_once(gunicorn_server):
    """The same session confirmed twice at once, until the pair lands on both workers:
    every time exactly one submission reaches the backend."""
    import sqlite3
    import threading

    server = gunicorn_server
    demo_db = server.log.parent / "demo_backend.db"
    split = 0
    for attempt in range(10):
        headers = server.token("race")
        for message, state in TRANSFER[:-1]:
            assert server.chat(headers, message).json()["state"] == state
        with sqlite3.connect(demo_db) as db:
            before = db.execute("SELECT COUNT(*) FROM calls").fetchone()[0]
        run = uuid.uuid4().hex[:8]
        gate = threading.Barrier(2)
        answers: list[requests.Response] = []

        def confirm(i: int, headers=headers, run=run, gate=gate, answers=answers) -> None:
            gate.wait()
            answers.append(server.chat(headers, "确认", tag=f"{run}-{i}"))

        threads = [threading.Thread(target=confirm, args=(i,)) for i in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=30)
        assert [a.status_code for a in answers] == [200, 200], [a.text for a in answers]
        states = sorted(a.json()["state"] for a in answers)
        assert "done" in states, states
        # A reply tells the application number; the other says it is being processed,
        # or (one that came at or after the end) tells the same number again: never a
        # second number.
        told = {m for a in answers for m in re.findall(r"受理编号：(SI\d+)", a.json()["reply"])}
        assert len(told) == 1, [a.json()["reply"] for a in answers]
        with sqlite3.connect(demo_db) as db:
            submitted = db.execute("SELECT idempotency_key FROM calls").fetchall()[before:]
        assert len(submitted) == 1, f"attempt {attempt}: {len(submitted)} submissions"
        split += len(set(_served(server, run).values())) == 2
        if split >= 2:
            break
    assert split >= 1, "the two confirms never reached both workers"


def test_rate_limit_holds_across_workers(gunicorn_server):
    server = gunicorn_server
    headers = server.token("limited")
    run = uuid.uuid4().hex[:8]
    codes = [server.chat(headers, "你好", tag=f"{run}-{i}").status_code
             for i in range(RATE_LIMIT + 1)]
    assert codes == [200] * RATE_LIMIT + [429]
    # Both workers served this user, yet the limit counted every request once.
    assert len(set(_served(server, run).values())) == 2
    # Another user is not affected.
    assert server.chat(server.token("other"), "你好").status_code == 200


# -- si-agent serve --------------------------------------------------------------------------


def test_si_agent_serve_over_https(tmp_path, tls_files, redis_client):
    cert, key = tls_files
    port = free_port()
    redis_prefix = f"si-serve-test-{uuid.uuid4().hex}:"
    url = f"https://127.0.0.1:{port}"
    # ``python -m si_agent.cli`` is the ``si-agent`` console script (si_agent.cli:main).
    command = [sys.executable, "-m", "si_agent.cli", "serve", "--host", "127.0.0.1",
               "--port", str(port), "--cert", str(cert), "--key", str(key)]
    process = _start(command, _server_env(tmp_path, redis_prefix), tmp_path / "serve.log", url,
                     str(cert))
    server = Server(url, str(cert), process, tmp_path / "serve.log")
    try:
        headers = server.token("serve")
        states = [server.chat(headers, m).json()["state"] for m in ("查养老金", ZHANG_WEI)]
        assert states == ["collecting", "done"]
        with pytest.raises(requests.exceptions.SSLError):
            requests.get(f"{url}/healthz", timeout=5)  # not trusted without the certificate
        # The default run is gunicorn with threads, not Werkzeug's development server.
        log = server.log.read_text(encoding="utf-8")
        assert "Starting gunicorn" in log and "Using worker: gthread" in log, log
        assert "development server" not in log, log
    finally:
        _stop(process)
        _delete_keys(redis_client, server, redis_prefix)


def test_si_agent_serve_refuses_an_invalid_configuration(tmp_path):
    """A worker that cannot build its app says why, and gunicorn stops instead of retrying."""
    businesses = tmp_path / "businesses"
    businesses.mkdir()
    (businesses / "broken.yaml").write_text("id: broken\nname: [unclosed\n", encoding="utf-8")
    env = {**api_env(tmp_path), "SI_BUSINESS_DIR": str(businesses)}
    command = [sys.executable, "-m", "si_agent.cli", "serve", "--port", str(free_port())]
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode != 0
    assert "refusing to start" in done.stderr and "broken.yaml" in done.stderr, done.stderr
    assert "serving on" not in done.stderr
