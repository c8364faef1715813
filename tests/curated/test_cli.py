"""``si-agent curated import FILE | list``, run as a real subprocess over a SQLite store,
and the app then answering from what it imported."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from si_agent.config.settings import Settings
from si_agent.server import create_app

ROOT = Path(__file__).resolve().parents[2]


def run(data_dir: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "SI_DATA_DIR": str(data_dir), "SI_SESSION_STORE": "sqlite",
           "SI_AUDIT_STORE": "sqlite", "SI_KNOWLEDGE": "none", "SI_LOG_LEVEL": "WARNING"}
    return subprocess.run([sys.executable, "-m", "si_agent.cli", *args], capture_output=True,
                          text=True, timeout=120, cwd=ROOT, env=env)


def test_import_check_list_and_the_app_answers(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("问题,答案,来源,日期\n失业金怎么领,,市人社局,2025-06\n", encoding="utf-8")
    out = run(tmp_path, "curated", "import", str(bad))
    assert out.returncode == 1 and "第2行：“答案”为空" in out.stderr
    good = tmp_path / "faq.csv"
    good.write_text("问题,答案,来源,日期,相似问法\n失业金怎么领,带身份证申请。,市人社局,2025-06,失业金咋领\n",
                    encoding="utf-8")
    out = run(tmp_path, "curated", "import", "--dry-run", str(good))
    assert out.returncode == 0 and "would import: 1 added, 0 updated" in out.stdout
    assert "0 curated answers" in run(tmp_path, "curated", "list").stderr
    out = run(tmp_path, "curated", "import", str(good))
    assert out.returncode == 0 and "1 added, 0 updated" in out.stdout, out.stderr
    assert "失业金怎么领" in run(tmp_path, "curated", "list").stdout
    assert "staff:curated_imported" in run(tmp_path, "audit").stdout

    app = create_app(Settings(business_dir=ROOT / "businesses", data_dir=tmp_path,
                              session_store="sqlite", knowledge="none",
                              rate_limit="1000 per minute",
                              jwt_secret="test-secret-of-the-curated-cli-0123456789"))
    client = app.test_client()
    access = client.post("/api/token", json={"user_id": "u1"}).get_json()["access_token"]
    reply = client.post("/api/chat", json={"message": "失业金咋领？"},
                        headers={"Authorization": f"Bearer {access}"}).get_json()["reply"]
    assert "带身份证申请。\n来源：《市人社局》（2025年6月）" in reply
