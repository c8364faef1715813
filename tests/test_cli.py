"""The si-agent command, run as a real subprocess."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def run(*args: str, tmp_path: Path, stdin: str = "", **env: str) -> subprocess.CompletedProcess:
    full_env = {**os.environ, "SI_DATA_DIR": str(tmp_path / "data"), "SI_SESSION_STORE": "memory",
                "SI_KNOWLEDGE": "none", **env}
    return subprocess.run(
        [sys.executable, "-m", "si_agent.cli", *args], input=stdin, capture_output=True,
        text=True, timeout=120, cwd=ROOT, env=full_env,
    )


@pytest.fixture
def broken(tmp_path) -> Path:
    target = tmp_path / "businesses"
    shutil.copytree(ROOT / "businesses", target)
    path = target / "card_loss.yaml"
    lines = path.read_text(encoding="utf-8").splitlines()
    index = next(i for i, line in enumerate(lines) if line.strip().startswith("type: phone"))
    lines[index] = lines[index].replace("type: phone", "type: telephone")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return target, index + 1


def test_validate_ok(tmp_path):
    out = run("validate", "businesses", tmp_path=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok: 13 businesses in businesses; assistant texts: _assistant.yaml"


def test_validate_reports_file_line_path(tmp_path, broken):
    directory, line = broken
    out = run("validate", str(directory), tmp_path=tmp_path)
    assert out.returncode == 1
    first = out.stdout.splitlines()[0]
    assert first.startswith(f"{directory / 'card_loss.yaml'}:{line}: fields[2].type: ")
    assert "telephone" in first and "idcard" in first


def test_validate_checks_the_assistant_texts(tmp_path):
    target = tmp_path / "businesses"
    shutil.copytree(ROOT / "businesses", target)
    (target / "_assistant.yaml").write_text("closing: 再见。\ngreeting: 您好，{user}！\n",
                                            encoding="utf-8")
    out = run("validate", str(target), tmp_path=tmp_path)
    assert out.returncode == 1
    assert out.stdout.splitlines() == [
        f"{target / '_assistant.yaml'}:2: greeting: unknown placeholder {{user}}; allowed: {{examples}}",
    ]
    (target / "_assistant.yaml").unlink()
    out = run("validate", str(target), tmp_path=tmp_path)
    assert out.returncode == 0, out.stdout
    assert out.stdout.strip() == f"ok: 13 businesses in {target}; assistant texts: built-in defaults"


def test_chat_refuses_to_start_on_invalid_config(tmp_path, broken):
    directory, line = broken
    out = run("chat", tmp_path=tmp_path, stdin="你好\n", SI_BUSINESS_DIR=str(directory))
    assert out.returncode == 2
    assert "refusing to start" in out.stderr and f"card_loss.yaml:{line}:" in out.stderr


def test_graph_prints_mermaid(tmp_path):
    out = run("graph", tmp_path=tmp_path)
    assert out.returncode == 0
    assert out.stdout.startswith("stateDiagram-v2")
    assert "confirming --> executing: confirm" in out.stdout


def test_chat_in_terminal_completes_a_query(tmp_path):
    out = run("chat", "--user", "cli-test", tmp_path=tmp_path,
              stdin="查养老金\n330122196303150178\n/quit\n")
    assert out.returncode == 0, out.stderr
    assert "养老金查询" in out.stdout
    assert "3256.80" in out.stdout
    assert "[状态 done | 业务 养老金查询 | ✓身份证号=3301**********0178]" in out.stdout
    assert "330122196303150178" not in out.stderr  # logs are masked


def test_chat_in_terminal_switches_and_resumes(tmp_path):
    lines = ["社保卡丢了，身份证330122196303150178", "查养老金", "好", "330122196303150178",
             "继续", "上个月底", "取消", "谢谢", "/quit"]
    out = run("chat", "--user", "cli-switch", "--engine", "rules", tmp_path=tmp_path,
              stdin="\n".join(lines) + "\n")
    assert out.returncode == 0, out.stderr
    assert "要先办理【养老金查询】吗？当前业务会为您保留。" in out.stdout
    assert "刚才的【社保卡挂失】还没办完，要继续吗？" in out.stdout
    assert "好的，继续办理【社保卡挂失】。" in out.stdout
    assert "“上个月底”不像是姓名。" in out.stdout
    assert "不客气" in out.stdout


def test_replay_passes_and_fails(tmp_path):
    good = tmp_path / "good.yaml"
    good.write_text(
        "name: ok\nturns:\n  - user: 查养老金\n    expect: {state: collecting, "
        "business: pension_query, awaiting: id_number}\n", encoding="utf-8")
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "name: wrong\nturns:\n  - user: 查养老金\n    expect: {state: done}\n", encoding="utf-8")
    out = run("replay", str(good), tmp_path=tmp_path)
    assert out.returncode == 0 and out.stdout.strip().endswith("1 passed, 0 failed")
    out = run("replay", str(good), str(bad), tmp_path=tmp_path)
    assert out.returncode == 1
    assert "FAIL" in out.stdout and "state 'collecting' != 'done'" in out.stdout


def test_chat_upload_command_checks_the_photo(tmp_path):
    not_image = tmp_path / "scan.jpg"
    not_image.write_bytes(b"%PDF-1.4 not a photo")
    lines = ["/upload", f"/upload {tmp_path / 'missing.jpg'}", f"/upload {not_image}", "/quit"]
    out = run("chat", "--user", "cli-upload", tmp_path=tmp_path, stdin="\n".join(lines) + "\n")
    assert out.returncode == 0, out.stderr
    assert "请在 /upload 后写照片的路径" in out.stdout
    assert "找不到或打不开这个文件" in out.stdout
    assert "只能上传 JPG、PNG 或 WebP 格式的照片。" in out.stdout
