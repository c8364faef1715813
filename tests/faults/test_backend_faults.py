"""Government backend faults: the API (``si-agent serve``, its own process) submits
card loss over real HTTP to the demo backend (its real Flask app and SQLite file),
served here on a fixed port behind a fault switch.

The faults: the port closed (connection refused), a backend that hangs for 30 s
(before applying, and after applying, so the response is lost), and an HTML
502 page from a proxy. Each gives a clear Chinese reply and a ``failed`` state
that keeps every collected field; "重新提交" later, with the backend healthy,
succeeds with exactly one application in the backend's database, holding every
value. The executor's timeout is the business's own ``api.timeout`` (set to
1 s in a copy of ``businesses/``); the hang is cut by it, not waited out.
"""

from __future__ import annotations

import os
import shutil
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from werkzeug.serving import make_server

from si_agent.demo_backend import create_demo_app
from si_agent.executor import texts
from si_agent.testing.processes import free_port, start_cli, stop, wait_until_up
from tests.faults._engine_helpers import CARD_LOSS, applications, calls

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 1.0  # card_loss's api.timeout in the copy
HANG = 30.0
BOUND = 2 * TIMEOUT + 6.0  # two attempts (the executor retries a transport error once)
HTML = ("<!DOCTYPE html><html><head><title>502 Bad Gateway</title></head>"
        "<body><center><h1>502 Bad Gateway</h1></center><hr><center>nginx</center></body></html>")
DIALOGUE = ["我的社保卡丢了", CARD_LOSS["id_number"], CARD_LOSS["name"], CARD_LOSS["phone"], "临时"]


class FaultyBackend:
    """The demo backend on a real port, with ``mode``: ok, html_502, hang_before
    (waits before the backend sees the call) or hang_after (the backend applies it,
    then the response is held back). ``down()`` closes the port; ``up()`` opens it."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.mode = "ok"
        self.release = threading.Event()  # ends a hang early (teardown)
        self.db: Path | None = None
        self.app = None
        self._server = None

    def use(self, db: Path) -> None:
        self.db, self.app, self.mode = db, create_demo_app(db), "ok"

    def up(self) -> None:
        self.release.clear()
        self._server = make_server("127.0.0.1", self.port, self, threaded=True)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def down(self) -> None:
        if self._server is not None:
            self.release.set()
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __call__(self, environ, start_response):
        mode = self.mode
        if mode == "html_502":
            start_response("502 Bad Gateway", [("Content-Type", "text/html; charset=utf-8")])
            return [HTML.encode()]
        if mode == "hang_before":
            self.release.wait(HANG)
        if mode != "hang_after":
            return self.app(environ, start_response)
        seen: dict = {}
        body = b"".join(self.app(environ, lambda s, h, e=None: seen.update(status=s, headers=h)))
        self.release.wait(HANG)  # applied and committed; the answer is late
        start_response(seen["status"], seen["headers"])
        return [body]


@pytest.fixture(scope="module")
def backend() -> Iterator[FaultyBackend]:
    server = FaultyBackend(free_port())
    yield server
    server.down()


@pytest.fixture(scope="module")
def api(backend, tmp_path_factory) -> Iterator[str]:
    businesses = tmp_path_factory.mktemp("businesses")
    shutil.copytree(ROOT / "businesses", businesses, dirs_exist_ok=True)
    yaml = businesses / "card_loss.yaml"
    text = yaml.read_text(encoding="utf-8")
    assert "  timeout: 10\n" in text
    yaml.write_text(text.replace("  timeout: 10\n", f"  timeout: {TIMEOUT}\n"), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("SI_")}
    env.update(SI_BUSINESS_DIR=str(businesses), SI_DATA_DIR=str(tmp_path_factory.mktemp("api")),
               SI_BACKEND_URL=f"http://127.0.0.1:{backend.port}", SI_KNOWLEDGE="none",
               SI_SESSION_STORE="sqlite", SI_ENGINE="rules", SI_RATE_LIMIT="1000 per minute",
               SI_JWT_SECRET="a secret of the backend fault tests")
    port = free_port()
    proc = start_cli(env, "serve", "--port", str(port),
                     log=tmp_path_factory.mktemp("logs") / "api.log")
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_up(url + "/healthz", proc, timeout=60)
        yield url
    finally:
        stop(proc)


@pytest.fixture
def citizen(api, backend, tmp_path) -> Iterator[httpx.Client]:
    """A new citizen at the confirmation of card loss, the backend fresh and up."""
    backend.use(tmp_path / "demo_backend.db")
    backend.up()
    client = httpx.Client(base_url=api, timeout=HANG + 10)
    token = client.post("/api/token", json={"user_id": f"backend-{uuid.uuid4().hex[:12]}"})
    client.headers["Authorization"] = f"Bearer {token.json()['access_token']}"
    for text in DIALOGUE:
        turn = say(client, text)
    assert turn["state"] == "confirming", turn["reply"]
    yield client
    client.close()
    backend.down()


def say(client: httpx.Client, text: str) -> dict:
    response = client.post("/api/chat", json={"message": text})
    assert response.status_code == 200, response.text
    return response.json()


def collected(turn: dict) -> set[str]:
    return {f["key"] for f in turn["fields"] if f["status"] == "collected"}


def fail_then_retry(citizen: httpx.Client, backend: FaultyBackend, message: str) -> dict:
    """Confirm under the fault: a clear failure that keeps every field; then retry
    with the backend healthy: done, one application with every value."""
    started = time.monotonic()
    failed = say(citizen, "确认")
    elapsed = time.monotonic() - started
    assert elapsed < BOUND, f"the failed submission took {elapsed:.1f} s"
    assert failed["state"] == "failed" and failed["awaiting"] == "retry", failed["reply"]
    assert message in failed["reply"] and "重试" in failed["reply"]
    assert "受理编号" not in failed["reply"]
    assert collected(failed) == set(CARD_LOSS)
    assert collected(citizen.get("/api/session").json()) == set(CARD_LOSS)  # stored, not just shown

    backend.release.set()
    backend.mode = "ok"
    if backend._server is None:
        backend.up()
    done = say(citizen, "重新提交")
    assert done["state"] == "done", done["reply"]
    assert "受理编号" in done["reply"]
    [application] = applications(backend.db, "card_loss")  # zero duplicates
    assert application["payload"] == CARD_LOSS  # zero lost fields
    assert done["result"]["application_no"] == application["application_no"]
    keys = {key for key, _ in calls(backend.db, "card_loss")}
    assert len(keys) == 1  # every attempt carried the same idempotency key
    return done


def settled(backend: FaultyBackend, expected: int, wait: float = 10.0) -> list[int]:
    """The statuses of the backend's card-loss calls once ``expected`` have arrived
    (released hangs finish in their own threads)."""
    deadline = time.monotonic() + wait
    while len(statuses := [s for _, s in calls(backend.db, "card_loss")]) < expected:
        if time.monotonic() > deadline:
            break
        time.sleep(0.05)
    return statuses


def test_connection_refused(citizen, backend):
    backend.down()
    fail_then_retry(citizen, backend, texts.UNREACHABLE)
    assert [status for _, status in calls(backend.db, "card_loss")] == [200]


def test_a_hang_before_the_backend_applies_is_cut_by_the_timeout(citizen, backend):
    backend.mode = "hang_before"
    fail_then_retry(citizen, backend, texts.UNREACHABLE)
    # The two hung attempts reach the backend once released (a slow backend works on
    # after the client gave up): replayed by their key, still one application.
    assert settled(backend, 3) == [200, 200, 200]
    assert len(applications(backend.db, "card_loss")) == 1


def test_a_hang_after_the_backend_applied_is_not_submitted_twice(citizen, backend):
    """The backend took the application but its answer never came: the retry carries
    the same idempotency key and gets the stored answer, not a second application."""
    backend.mode = "hang_after"
    fail_then_retry(citizen, backend, texts.UNREACHABLE)
    # The first attempt applied it; the executor's own retry and the citizen's were replayed.
    assert settled(backend, 3) == [200, 200, 200]
    assert len(applications(backend.db, "card_loss")) == 1


def test_an_html_error_page(citizen, backend):
    backend.mode = "html_502"
    fail_then_retry(citizen, backend, texts.BUSY)
    assert [status for _, status in calls(backend.db, "card_loss")] == [200]
