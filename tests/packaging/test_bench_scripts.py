"""The benchmark scripts clean up after themselves when a server does not start."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"


def test_bench_load_stops_its_redis_when_gunicorn_fails_to_start(monkeypatch):
    pytest.importorskip("aiohttp")
    monkeypatch.syspath_prepend(str(SCRIPTS))
    import bench_load

    stopped: list[str] = []

    def no_gunicorn(*args, **kwargs):
        raise RuntimeError("gunicorn did not start")

    monkeypatch.setattr(bench_load, "_start_redis", lambda data_dir: (
        "own-redis", "redis://127.0.0.1:1/0"))
    monkeypatch.setattr(bench_load, "_start_gunicorn", no_gunicorn)
    monkeypatch.setattr(bench_load, "_stop", stopped.append)
    monkeypatch.setattr(sys, "argv", ["bench_load.py"])
    with pytest.raises(RuntimeError, match="gunicorn did not start"):
        bench_load.main()
    assert stopped == ["own-redis"]


def test_bench_api_walks_the_dialogues_with_wrk_and_deletes_its_keys(redis_url, redis_client):
    """A tiny run of scripts/bench_api.py: wrk's Lua script (scripts/wrk_dialogue.lua)
    walks whole dialogues, every turn answers 2xx, every dialogue ends in done, and the
    run's Redis keys are gone afterwards."""
    import os
    import re
    import shutil
    import subprocess

    if not shutil.which("wrk"):
        if os.environ.get("SI_REQUIRE_WRK") == "1":
            pytest.fail("wrk is not installed (scripts/test.sh installs it)")
        pytest.skip("wrk is not installed (apt-get install wrk)")
    root = SCRIPTS.parent
    env = {**os.environ, "PYTHONPATH": str(root)}
    done = subprocess.run(
        [sys.executable, str(SCRIPTS / "bench_api.py"), "--duration", "2", "--users", "4",
         "--workers", "1", "--threads", "2", "--endpoints", "chat,healthz",
         "--redis-url", redis_url],
        capture_output=True, text=True, env=env, cwd=root, timeout=300, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "load: wrk" in done.stdout
    chat = next(line for line in done.stdout.splitlines() if line.startswith("POST /api/chat"))
    requests_, dialogues, failed, errors = (int(x) for x in chat.split()[3:7])
    assert requests_ >= 7 and dialogues >= 2 and failed == 0 and errors == 0, chat
    healthz = next(line for line in done.stdout.splitlines() if line.startswith("GET /healthz"))
    assert int(healthz.split()[7]) == 0, healthz  # no errors
    prefix = re.search(r"prefix (\S+), rate-limit counters of (\S+)\)", done.stdout)
    assert prefix, done.stdout
    assert not list(redis_client.scan_iter(f"{prefix.group(1)}*"))
    assert not list(redis_client.scan_iter(f"LIMITS:*{prefix.group(2)}"))


def test_bench_turns_deletes_its_redis_keys(redis_url, redis_client):
    """scripts/bench_turns.py writes under a prefix of its own and leaves nothing there."""
    import os
    import subprocess

    root = SCRIPTS.parent
    transcript = root / "tests" / "dialogues" / "card_apply__address_in_one_message.yaml"
    before = set(redis_client.scan_iter("si-bench-turns-*"))
    done = subprocess.run(
        [sys.executable, str(SCRIPTS / "bench_turns.py"), "--rounds", "1",
         "--dialogues", str(transcript), "--redis-url", redis_url],
        capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(root)},
        cwd=root, timeout=300, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    redis_row = next(line for line in done.stdout.splitlines() if line.startswith("redis"))
    assert int(redis_row.split()[1]) > 0 and redis_row.split()[-1] == "0", redis_row  # turns, failed
    assert set(redis_client.scan_iter("si-bench-turns-*")) <= before
