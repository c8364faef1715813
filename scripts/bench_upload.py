"""Cost of hostile uploads: peak memory and time of ``POST /api/upload`` per case.

A PNG of 40 megapixels of one colour compresses to about 120 KB; decoding it
allocates 120 MB of pixels, and transposing and re-encoding it more. Each case
runs in a fresh child process (the real app, memory sessions, the Flask test
client; the photo step's handler is a stand-in that reads nothing), so the peak
RSS it reports is that case's alone:

    no step     the 40 MP PNG with no photo step awaited
    step        the 40 MP PNG while the ID-card step awaits it
    4 at once   four users, each awaited, upload it at the same moment
    12 MP       a real-sized 4032x3024 phone photo (JPEG) while the step awaits it

    python scripts/bench_upload.py            # the table
    PYTHONPATH=/other/checkout python scripts/bench_upload.py   # another version's code
"""

from __future__ import annotations

import argparse
import io
import json
import resource
import subprocess
import sys
import tempfile
import threading
import time
import zlib
from pathlib import Path
from struct import pack

ROOT = Path(__file__).resolve().parents[1]
CASES = {"no step": (1, False, "bomb"), "step": (1, True, "bomb"),
         "4 at once": (4, True, "bomb"), "12 MP": (1, True, "photo")}


def flat_png(width: int, height: int) -> bytes:
    """A valid PNG of width×height black pixels: tiny on disk, huge decoded."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return pack(">I", len(data)) + kind + data + pack(">I", zlib.crc32(kind + data))
    rows = zlib.compress(b"\x00" * ((width * 3 + 1) * height), 9)
    header = pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", rows) + chunk(b"IEND", b"")


def phone_photo() -> bytes:
    from PIL import Image

    out = io.BytesIO()
    Image.effect_noise((4032, 3024), 40).convert("RGB").save(out, "JPEG", quality=85)
    return out.getvalue()


def run_case(name: str) -> dict:
    """One case in this process: the app, the sessions, then the timed uploads."""
    from si_agent.app import build_controller
    from si_agent.config.settings import Settings
    from si_agent.flow.steps import StepResult
    from si_agent.server import create_app

    class Reader:
        def run(self, step, upload, context):
            return StepResult(fields={"name": "张伟", "id_number": "330122196303150178"})

    users, awaited, kind = CASES[name]
    settings = Settings(business_dir=ROOT / "businesses", knowledge="none", engine="rules",
                        data_dir=Path(tempfile.mkdtemp(prefix="si-bench-upload-")),
                        session_store="memory", rate_limit="100000 per minute",
                        log_level="WARNING")
    base = build_controller(settings)
    controller = type(base)(base.catalog, base.store, base.engine, base.executor,
                            step_handlers={"id_card_ocr": Reader(), "face_match": Reader()})
    app = create_app(settings, controller=controller)
    body = flat_png(7300, 5475) if kind == "bomb" else phone_photo()
    clients = []
    for i in range(users):
        client = app.test_client()
        token = client.post("/api/token", json={"user_id": f"u{i}"}).get_json()["access_token"]
        headers = {"Authorization": f"Bearer {token}"}
        if awaited:
            client.post("/api/chat", headers=headers, json={"message": "我要做养老金资格认证"})
        clients.append((client, headers))
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    statuses: list[int] = []
    go = threading.Barrier(users)

    def send(client, headers) -> None:
        go.wait()
        res = client.post("/api/upload", headers=headers, content_type="multipart/form-data",
                          data={"file": (io.BytesIO(body), "p.png")})
        statuses.append(res.status_code)

    started = time.perf_counter()
    threads = [threading.Thread(target=send, args=pair) for pair in clients]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {"file_kb": len(body) // 1024, "statuses": sorted(statuses),
            "seconds": elapsed, "peak_mb": (peak - before) / 1024}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--case", choices=sorted(CASES), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.case:
        print(json.dumps(run_case(args.case)))
        return
    print(f"{'case':<10} {'file KB':>8} {'answers':<20} {'seconds':>8} {'peak RSS +MB':>13}")
    print("-" * 63)
    for name in CASES:
        out = subprocess.run([sys.executable, __file__, "--case", name], capture_output=True,
                             text=True, timeout=600, check=True)
        row = json.loads(out.stdout.strip().splitlines()[-1])
        answers = ",".join(str(s) for s in row["statuses"])
        print(f"{name:<10} {row['file_kb']:>8} {answers:<20} {row['seconds']:>8.2f} "
              f"{row['peak_mb']:>13.0f}")


if __name__ == "__main__":
    main()
