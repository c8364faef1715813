"""Hand-off across two real server processes sharing Redis (gunicorn, one worker each).

A citizen talks to server A; staff members sign in on server B (and on A): the ticket
opened on A is in B's queue, the presence of staff on B changes what A promises, one
of two staff members on the two servers wins a take, the staff member's reply written
on B reaches the citizen's event stream on A, and the hand-back lets A's assistant go
on with the business. Processes and Redis keys are removed afterwards.
"""

from __future__ import annotations

import json
import os
import re
import sys
import threading
import time
import uuid
from collections.abc import Iterator

import pytest

from si_agent.staff import Accounts, StaffStore
from si_agent.testing.processes import api_env, free_port
from tests.server.test_gunicorn import _start, _stop

pytest.importorskip("gunicorn")
requests = pytest.importorskip("requests")
redis = pytest.importorskip("redis")

pytestmark = pytest.mark.redis

REDIS_URL = os.environ.get("SI_TEST_REDIS_URL", "redis://127.0.0.1:6379/15")
PASSWORD = "correct horse battery"
ID = "330102199503080133"
_CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')


@pytest.fixture(scope="module")
def servers(tmp_path_factory) -> Iterator[tuple[str, str]]:
    client = redis.Redis.from_url(REDIS_URL)
    try:
        client.ping()
    except redis.exceptions.ConnectionError:
        if os.environ.get("SI_SKIP_REDIS") == "1":
            pytest.skip(f"no Redis at {REDIS_URL} (SI_SKIP_REDIS=1)")
        pytest.fail(f"no Redis at {REDIS_URL}")
    data = tmp_path_factory.mktemp("handoff-two")
    accounts = Accounts(StaffStore(data / "staff.db"))
    accounts.add("gh1024", PASSWORD)
    accounts.add("gh2048", PASSWORD)
    prefix = f"si-handoff-test-{uuid.uuid4().hex}:"
    env = api_env(data, session_store="redis", redis_url=REDIS_URL,
                  redis_prefix=prefix + "session:", handoff_hours="always",
                  audit_store="redis")
    processes, urls = [], []
    try:
        for name in ("a", "b"):
            port = free_port()
            url = f"http://127.0.0.1:{port}"
            command = [sys.executable, "-m", "gunicorn", "--workers", "1", "--threads", "8",
                       "--bind", f"127.0.0.1:{port}", "si_agent.server:create_app()"]
            processes.append(_start(command, env, data / f"{name}.log", url, True))
            urls.append(url)
        yield urls[0], urls[1]
    finally:
        for process in processes:
            _stop(process)
        keys = list(client.scan_iter(f"{prefix}*"))
        if keys:
            client.delete(*keys)
        client.close()


class Citizen:
    def __init__(self, url: str) -> None:
        self.url = url
        user = f"citizen-{uuid.uuid4().hex[:10]}"
        token = requests.post(f"{url}/api/token", json={"user_id": user}, timeout=10).json()
        self.headers = {"Authorization": f"Bearer {token['access_token']}"}

    def say(self, text: str) -> dict:
        res = requests.post(f"{self.url}/api/chat", json={"message": text},
                            headers=self.headers, timeout=10)
        assert res.status_code == 200, res.text
        return res.json()


def staff_on(url: str, name: str):
    session = requests.Session()
    page = session.get(f"{url}/console/login", timeout=10).text
    res = session.post(f"{url}/console/login", timeout=10, allow_redirects=False,
                       data={"name": name, "password": PASSWORD,
                             "csrf_token": _CSRF.search(page).group(1)})
    assert res.status_code == 303, res.text
    return session


def post(session, url: str, path: str, page: str, **data):
    token = _CSRF.search(session.get(f"{url}{page}", timeout=10).text).group(1)
    return session.post(f"{url}{path}", data={"csrf_token": token, **data}, timeout=10,
                        allow_redirects=False)


def test_a_handoff_across_two_processes(servers):
    a, b = servers
    citizen = Citizen(a)
    citizen.say(f"社保卡丢了，身份证{ID}，刘洋")
    first = citizen.say("转人工")
    number = first["handoff"]["number"]
    assert "目前没有人工客服在线" in first["reply"]

    on_b = staff_on(b, "gh1024")
    queue = on_b.get(f"{b}/console/handoff", timeout=10)
    assert number in queue.text  # opened on A, listed on B
    promised = Citizen(a).say("我要人工")
    assert "人工客服接入后会在这里回复您" in promised["reply"]  # staff at B's queue count on A

    on_a = staff_on(a, "gh2048")
    results = {}

    def take(name, session, url):
        results[name] = post(session, url, f"/console/handoff/{number}/take",
                             "/console/handoff").status_code

    threads = [threading.Thread(target=take, args=("b", on_b, b)),
               threading.Thread(target=take, args=("a", on_a, a))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results.values()) == [303, 409], results
    winner, url = (on_b, b) if results["b"] == 303 else (on_a, a)
    holder = "gh1024" if results["b"] == 303 else "gh2048"

    events: list[tuple[str, dict]] = []
    stream = requests.get(f"{a}/api/session/handoff/events?ticket={number}", stream=True,
                          headers={**citizen.headers, "Accept": "text/event-stream"}, timeout=30)
    assert stream.status_code == 200

    def read() -> None:
        name = None
        for line in stream.iter_lines(decode_unicode=True):
            if line.startswith("event: "):
                name = line[7:]
            elif line.startswith("data: ") and name:
                events.append((name, json.loads(line[6:])))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()

    said = citizen.say("卡丢在公交上了")
    assert said["reply"] == "" and said["handoff"]["staff"] == holder
    started = time.monotonic()
    assert post(winner, url, f"/console/handoff/{number}/reply", f"/console/handoff/{number}",
                text="您好，我来帮您").status_code == 303
    while time.monotonic() - started < 10 and not any(
            e == "message" and d["sender"] == "staff" for e, d in events):
        time.sleep(0.1)
    staff_said = [d for e, d in events if e == "message" and d["sender"] == "staff"]
    assert staff_said and staff_said[0]["text"] == "您好，我来帮您"
    delay = time.monotonic() - started
    assert delay < 3, f"a staff reply took {delay:.1f} s to reach the citizen's stream"

    assert post(winner, url, f"/console/handoff/{number}/handback",
                f"/console/handoff/{number}").status_code == 303
    reader.join(timeout=10)
    assert not reader.is_alive(), "the stream did not end after the hand-back"
    assert [d["state"] for e, d in events if e == "status"] == ["held", "closed"]
    assert [d["sender"] for e, d in events if e == "message"] == [
        "system", "citizen", "staff", "system"]
    back = citizen.say("13800138000")
    assert back["handoff"] is None and back["awaiting"] == "loss_type"
    print(f"staff reply reached the citizen's stream on the other process in {delay:.2f} s")
