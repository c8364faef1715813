"""Citizens waiting on event streams cannot take every server thread (si_agent.server.streams).

Against ``si-agent serve`` as shipped (gunicorn, one worker of 8 threads): more hand-off
streams are opened than there are threads, by eight citizens waiting for a person and
by one citizen opening eight streams to their own ticket; ``/healthz`` and another
citizen's turn still answer at once, the streams beyond the limit are answered as polls
(``again``), and a citizen's older stream is ended by their newer one.
"""

from __future__ import annotations

import signal
import time
from collections.abc import Iterator
from contextlib import ExitStack

import pytest

from si_agent.testing.processes import api_env, free_port, start_cli, stop, wait_until_up

httpx = pytest.importorskip("httpx")
pytest.importorskip("gunicorn")

QUICK = 3.0  # seconds within which /healthz and a turn must answer


@pytest.fixture
def server(tmp_path) -> Iterator[str]:
    """A server per test: a stream whose client left holds its slot until its next write."""
    data = tmp_path
    env = api_env(data, handoff_hours="always")
    port = free_port()
    proc = start_cli(env, "serve", "--port", str(port), log=data / "serve.log")
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_up(url + "/healthz", proc, timeout=60)
        yield url
    finally:
        stop(proc, signal.SIGKILL)  # the streams left open need not finish


def citizen(client: httpx.Client, user: str) -> tuple[dict[str, str], str]:
    """A citizen who asked for a person: their headers and ticket number."""
    token = client.post("/api/token", json={"user_id": user}).json()["access_token"]
    headers = {"Authorization": f"Bearer {token}"}
    turn = client.post("/api/chat", json={"message": "转人工"}, headers=headers).json()
    return headers, turn["handoff"]["number"]


def open_stream(stack: ExitStack, client: httpx.Client, headers: dict[str, str],
                number: str) -> httpx.Response:
    return stack.enter_context(client.stream(
        "GET", f"/api/session/handoff/events?ticket={number}&after=0",
        headers={**headers, "Accept": "text/event-stream"}))


def answers_quickly(client: httpx.Client, headers: dict[str, str]) -> None:
    started = time.monotonic()
    assert client.get("/healthz", timeout=QUICK).status_code == 200
    turn = client.post("/api/chat", json={"message": "社保卡怎么补办"}, headers=headers,
                       timeout=QUICK)
    assert turn.status_code == 200 and turn.json()["reply"]
    assert time.monotonic() - started < QUICK


def test_eight_waiting_citizens_leave_threads_for_everyone_else(server):
    with httpx.Client(base_url=server, timeout=10) as client, ExitStack() as stack:
        waiting = [citizen(client, f"wait{i}") for i in range(10)]
        other = citizen(client, "other")[0]
        responses = [open_stream(stack, client, h, n) for h, n in waiting]
        assert all(r.status_code == 200 for r in responses)
        live = [r for r in responses if "Retry-After" not in r.headers]
        polls = [r for r in responses if "Retry-After" in r.headers]
        assert len(live) == 4 and len(polls) == 6  # half of the 8 threads
        for poll in polls:  # the events due now, then when to ask again: the body ends
            body = poll.read().decode()
            assert "event: status" in body and "event: again" in body
        answers_quickly(client, other)


def test_one_citizen_opening_eight_streams_keeps_one(server):
    with httpx.Client(base_url=server, timeout=10) as client, ExitStack() as stack:
        headers, number = citizen(client, "many")
        other = citizen(client, "other2")[0]
        responses = [open_stream(stack, client, headers, number) for _ in range(8)]
        answers_quickly(client, other)
        for older in responses[:-1]:  # each ended by the next, told to come back later
            assert older.read().decode().rstrip().endswith('"seconds": 15}')
        newest = next(responses[-1].iter_text())
        assert newest.startswith(": following")


@pytest.mark.parametrize(("threads", "wanted", "kept"), [(8, 4, 4), (4, 4, 2), (2, 6, 1),
                                                         (16, 8, 8), (1, 4, 0)])
def test_serve_keeps_live_streams_to_half_the_threads(monkeypatch, tmp_path, threads, wanted,
                                                      kept):
    from si_agent.config.settings import Settings
    from si_agent.server import running

    booted: list[Settings] = []
    monkeypatch.setattr(running, "_booted", booted.append)
    monkeypatch.setattr(running, "run_gunicorn", lambda load, **options: load())
    running.serve_gunicorn(Settings(data_dir=tmp_path, max_streams=wanted), host="127.0.0.1",
                           port=1, workers=1, threads=threads)
    assert booted[0].max_streams == kept  # 0: every stream is a poll
