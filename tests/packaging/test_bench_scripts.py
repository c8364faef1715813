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
