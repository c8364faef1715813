"""Idempotency of handle-type businesses: one key, one application, even under races."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from si_agent.demo_backend import create_demo_app
from si_agent.demo_backend.seed import APPLICATIONS, PERSONS
from si_agent.errors import ExecutorError
from si_agent.executor import Executors

WANG_FANG, LIU_YANG = PERSONS[2].id_number, PERSONS[3].id_number
VALUES = {"from_city": "杭州市", "to_city": "苏州市", "id_number": LIU_YANG, "name": "刘洋"}


@pytest.fixture
def transfer(make_business):
    return make_business("social_transfer", ["from_city", "to_city", "id_number", "name"])


SEEDED = tuple(a[0] for a in APPLICATIONS)


def count(db_path: Path, business_id: str = "social_transfer") -> int:
    """Applications of ``business_id`` created by the tests (not the seeded ones)."""
    marks = ", ".join("?" * len(SEEDED))
    with sqlite3.connect(db_path) as conn:
        (n,) = conn.execute(
            f"SELECT count(*) FROM applications WHERE business_id = ?"
            f" AND application_no NOT IN ({marks})",
            (business_id, *SEEDED),
        ).fetchone()
    return n


def test_same_key_twice_gives_the_same_application(executors: Executors, db_path: Path, transfer):
    first = executors.run(transfer, VALUES, idempotency_key="same-key")
    second = executors.run(transfer, VALUES, idempotency_key="same-key")
    assert first == second
    assert count(db_path) == 1
    third = executors.run(transfer, VALUES, idempotency_key="other-key")
    assert third["application_no"] != first["application_no"]
    assert count(db_path) == 2


def test_concurrent_duplicates_create_one_application(
    executors: Executors, db_path: Path, transfer
):
    start = threading.Barrier(16)

    def submit(_: int) -> str:
        start.wait()
        return executors.run(transfer, VALUES, idempotency_key="race")["application_no"]

    with ThreadPoolExecutor(16) as pool:
        numbers = set(pool.map(submit, range(16)))
    assert len(numbers) == 1
    assert count(db_path) == 1


def test_concurrent_distinct_keys_get_distinct_numbers(
    executors: Executors, db_path: Path, transfer
):
    start = threading.Barrier(12)

    def submit(i: int) -> str:
        start.wait()
        return executors.run(transfer, VALUES, idempotency_key=f"k{i}")["application_no"]

    with ThreadPoolExecutor(12) as pool:
        numbers = list(pool.map(submit, range(12)))
    assert len(set(numbers)) == 12
    assert count(db_path) == 12


def test_concurrent_duplicates_across_processes(executors: Executors, db_path: Path, transfer):
    # Each process builds its own demo app over the same file, as two servers would.
    executors.run(transfer, VALUES, idempotency_key="warm-up")  # seed before the race
    script = (
        "import json, sys\n"
        "from si_agent.demo_backend import create_demo_app\n"
        "client = create_demo_app(sys.argv[1]).test_client()\n"
        "body = json.loads(sys.argv[2])\n"
        "r = client.post('/api/social_transfer', json=body,"
        " headers={'Idempotency-Key': 'cross-process'})\n"
        "print(r.get_json()['application_no'])\n"
    )
    repo = Path(__file__).resolve().parents[2]
    procs = [
        subprocess.Popen([sys.executable, "-c", script, str(db_path), json.dumps(VALUES)],
                         cwd=repo, stdout=subprocess.PIPE, text=True)
        for _ in range(4)
    ]
    outputs = {p.communicate(timeout=60)[0].strip() for p in procs}
    assert all(p.returncode == 0 for p in procs)
    assert len(outputs) == 1
    assert count(db_path) == 2  # the warm-up and one cross-process application


def test_a_refusal_is_not_stored_under_the_key(executors: Executors, db_path: Path, transfer):
    with_bad_name = {**VALUES, "name": "刘小洋"}
    try:
        executors.run(transfer, with_bad_name, idempotency_key="fix-me")
    except ExecutorError as exc:
        assert exc.field_errors == {"name": "姓名与身份证号码不一致。"}
    else:
        raise AssertionError("expected a name mismatch")
    result = executors.run(transfer, VALUES, idempotency_key="fix-me")
    assert result["application_no"].startswith("SI")
    assert count(db_path) == 1


def test_missing_key_header_is_refused(db_path: Path):
    client = create_demo_app(db_path).test_client()
    response = client.post("/api/social_transfer", json=VALUES)
    assert response.status_code == 400
    assert "Idempotency-Key" in response.get_json()["error"]["message"]
    # queries need no key
    response = client.post("/api/pension_query", json={"id_number": WANG_FANG})
    assert response.status_code == 404


def test_replay_is_marked_and_reuse_for_another_business_is_refused(db_path: Path):
    client = create_demo_app(db_path).test_client()
    headers = {"Idempotency-Key": "shared"}
    first = client.post("/api/social_transfer", json=VALUES, headers=headers)
    again = client.post("/api/social_transfer", json=VALUES, headers=headers)
    assert first.get_json() == again.get_json()
    assert "Idempotent-Replayed" not in first.headers
    assert again.headers["Idempotent-Replayed"] == "true"
    other = client.post(
        "/api/phone_change",
        json={"id_number": LIU_YANG, "name": "刘洋", "new_phone": "13912345678"},
        headers=headers,
    )
    assert other.status_code == 422
