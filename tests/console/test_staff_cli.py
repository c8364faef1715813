"""``si-agent staff add|list|remove|passwd``, run as a real subprocess, and the accounts it makes."""

from __future__ import annotations

import getpass
import json
import os
import subprocess
import sys
from pathlib import Path

from si_agent.server import create_app
from tests.console.conftest import PASSWORD, console_settings, sign_in

ROOT = Path(__file__).resolve().parents[2]


def run(data_dir: Path, *args: str, stdin: str = "", session_store: str = "memory"
        ) -> subprocess.CompletedProcess:
    env = {
        **os.environ,
        "SI_DATA_DIR": str(data_dir),
        "SI_SESSION_STORE": session_store,
        "SI_AUDIT_STORE": "sqlite",
        "SI_KNOWLEDGE": "none",
        "SI_LOG_LEVEL": "WARNING",
    }
    return subprocess.run(
        [sys.executable, "-m", "si_agent.cli", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        env=env,
    )


def staff_entries(data_dir: Path) -> list[dict]:
    out = run(data_dir, "audit", "--json")
    assert out.returncode == 0, out.stderr
    return [e for e in map(json.loads, out.stdout.splitlines()) if e["event"] == "staff"]


def test_add_list_sign_in_remove(tmp_path):
    added = run(tmp_path, "staff", "add", "张三", stdin=PASSWORD + "\n")
    assert added.returncode == 0, added.stderr
    assert added.stdout.strip() == "added 张三 (staff)"
    assert run(tmp_path, "staff", "add", "admin1", "--admin", stdin=PASSWORD + "\n").returncode == 0
    listing = run(tmp_path, "staff", "list")
    assert listing.returncode == 0
    lines = listing.stdout.splitlines()
    assert lines[0].split() == ["name", "role", "created", "(UTC)", "last", "sign-in", "(UTC)"]
    assert [line.split()[:2] for line in lines[1:]] == [["admin1", "admin"], ["张三", "staff"]]
    assert PASSWORD not in listing.stdout and "argon2" not in listing.stdout
    assert (tmp_path / "staff.db").stat().st_mode & 0o077 == 0  # owner-only

    # The account signs in to the console of a server on the same data directory.
    app = create_app(console_settings(tmp_path))
    client = app.test_client()
    assert sign_in(client, "张三").status_code == 303
    assert client.get("/console/").status_code == 200

    removed = run(tmp_path, "staff", "remove", "张三")
    assert removed.returncode == 0, removed.stderr
    assert "1 console session(s) ended" in removed.stdout
    assert client.get("/console/").status_code == 303  # signed out at once
    assert sign_in(client, "张三").status_code == 401
    assert [line.split()[0] for line in run(tmp_path, "staff", "list").stdout.splitlines()[1:]] == [
        "admin1"
    ]

    entries = staff_entries(tmp_path)  # newest first
    cli = f"cli:{getpass.getuser()}"
    assert [(e["action"], e["target"]) for e in entries if e["actor"] == cli] == [
        ("account_removed", "张三"),
        ("account_added", "admin1"),
        ("account_added", "张三"),
    ]
    assert [e["action"] for e in entries if e["actor"] != cli] == ["sign_in_failed", "signed_in"]
    assert any(e["action"] == "signed_in" and e["actor"] == "张三" for e in entries)
    assert PASSWORD not in json.dumps(entries)


def test_refusals_change_nothing(tmp_path):
    assert run(tmp_path, "staff", "add", "li", stdin=PASSWORD + "\n").returncode == 0
    for args, stdin, message in (
        (("add", "li"), PASSWORD + "\n", "exists already"),
        (("add", "wang"), "short\n", "10 to 1024 characters"),
        (("add", "wang"), " " + PASSWORD + "\n", "start or end with a space"),
        (("add", "bad name"), PASSWORD + "\n", "1-64 letters"),
        (("remove", "nobody"), "", "no account named 'nobody'"),
        (("passwd", "nobody"), PASSWORD + "\n", "no account named 'nobody'"),
    ):
        out = run(tmp_path, "staff", *args, stdin=stdin)
        assert out.returncode == 2, (args, out.stdout)
        assert message in out.stderr, (args, out.stderr)
    listing = run(tmp_path, "staff", "list").stdout.splitlines()
    assert [line.split()[0] for line in listing[1:]] == ["li"]
    assert [e["action"] for e in staff_entries(tmp_path)] == ["account_added"]


def test_passwd_changes_the_password_and_ends_sessions(tmp_path):
    assert run(tmp_path, "staff", "add", "li", stdin=PASSWORD + "\n").returncode == 0
    app = create_app(console_settings(tmp_path))
    client = app.test_client()
    assert sign_in(client, "li").status_code == 303
    changed = run(tmp_path, "staff", "passwd", "li", stdin="a brand new password\n")
    assert changed.returncode == 0, changed.stderr
    assert client.get("/console/").status_code == 303
    assert sign_in(client, "li").status_code == 401
    assert sign_in(client, "li", "a brand new password").status_code == 303
    assert [e["action"] for e in staff_entries(tmp_path)] == [
        "signed_in",
        "sign_in_failed",
        "password_changed",
        "signed_in",
        "account_added",
    ]


def test_a_removed_or_changed_account_leaves_the_hand_off_queue(tmp_path):
    """The account's presence at the queue ends with its sessions: no citizen is told a
    person is coming for the rest of the presence lease."""
    app = create_app(console_settings(tmp_path, session_store="sqlite", handoff_hours="always"))
    desk = app.config["SI_CONTROLLER"].handoff
    for name in ("gh1", "gh2"):
        app.config["SI_STAFF_ACCOUNTS"].add(name, PASSWORD)
        client = app.test_client()
        assert sign_in(client, name).status_code == 303
        assert client.get("/console/handoff").status_code == 200  # at the queue
    assert sorted(desk.present()) == ["gh1", "gh2"]
    assert run(tmp_path, "staff", "remove", "gh1", session_store="sqlite").returncode == 0
    assert desk.present() == ["gh2"]
    changed = run(tmp_path, "staff", "passwd", "gh2", stdin=PASSWORD + "x\n",
                  session_store="sqlite")
    assert changed.returncode == 0, changed.stderr
    assert desk.present() == []
