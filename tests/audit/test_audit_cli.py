"""``si-agent audit`` and ``si-agent admin-token``, run as real subprocesses."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

from si_agent.audit import AuditEntry
from si_agent.audit.model import utc_now
from si_agent.audit.sqlite import SQLiteAuditStore
from si_agent.config.settings import Settings
from si_agent.server import create_app

from .conftest import ROOT


def run(*args: str, data: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "SI_DATA_DIR": str(data), "SI_SESSION_STORE": "memory",
           "SI_AUDIT_STORE": "sqlite", "SI_KNOWLEDGE": "none"}
    return subprocess.run([sys.executable, "-m", "si_agent.cli", *args], capture_output=True,
                          text=True, timeout=120, cwd=ROOT, env=env)


def fill(data: Path) -> None:
    store = SQLiteAuditStore(data / "audit.db")
    for hours, business, outcome in [(50, "card_apply", "succeeded"), (5, "card_loss", "failed"),
                                     (1, "card_apply", "running")]:
        store.append(AuditEntry(at=utc_now() - timedelta(hours=hours), event="submission",
                                user="ab" * 16, business=business, job_id=f"job{hours}",
                                channel="http", outcome=outcome, application_no=f"SI{hours}",
                                values={"id_number": "3301**********0178"}))


def test_audit_prints_a_table_newest_first(tmp_path):
    fill(tmp_path)
    out = run("audit", data=tmp_path)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].split() == ["time", "(UTC)", "event", "business", "job", "outcome",
                                "application_no", "user", "values"]
    assert [line.split()[4] for line in lines[1:]] == ["job1", "job5", "job50"]
    assert "id_number=3301**********0178" in lines[1] and "3 entries" in out.stderr


def test_audit_filters_by_business_and_since_as_json_lines(tmp_path):
    fill(tmp_path)
    out = run("audit", "--business", "card_apply", "--json", data=tmp_path)
    assert out.returncode == 0, out.stderr
    assert [json.loads(line)["job_id"] for line in out.stdout.splitlines()] == ["job1", "job50"]
    out = run("audit", "--since", "6h", "--json", data=tmp_path)
    assert [json.loads(line)["job_id"] for line in out.stdout.splitlines()] == ["job1", "job5"]
    since = (utc_now() - timedelta(hours=3)).strftime("%Y-%m-%dT%H:%M")
    out = run("audit", "--since", since, "--business", "card_apply", "--json", data=tmp_path)
    assert [json.loads(line)["job_id"] for line in out.stdout.splitlines()] == ["job1"]
    out = run("audit", "--since", "yesterday", data=tmp_path)
    assert out.returncode == 2 and "--since" in out.stderr and out.stdout == ""


def test_admin_token_opens_the_admin_endpoint(tmp_path):
    out = run("admin-token", "--user", "ops", data=tmp_path)
    assert out.returncode == 0, out.stderr
    settings = Settings(business_dir=ROOT / "businesses", knowledge="none", data_dir=tmp_path,
                        session_store="memory", audit_store="sqlite")
    fill(tmp_path)
    client = create_app(settings).test_client()
    response = client.get("/api/admin/audit?business=card_loss",
                          headers={"Authorization": f"Bearer {out.stdout.strip()}"})
    assert response.status_code == 200
    assert [e["job_id"] for e in response.get_json()["entries"]] == ["job5"]
