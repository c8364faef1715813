"""The si-agent command, run as a real subprocess."""

from __future__ import annotations

import hashlib
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
    assert out.stdout.strip() == ("ok: 13 businesses in businesses; assistant texts: _assistant.yaml; "
                                  "moderation list: built-in default (55 words)")


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
    assert out.stdout.strip() == (f"ok: 13 businesses in {target}; assistant texts: built-in defaults; "
                                  "moderation list: built-in default (55 words)")


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
    assert "[状态 已办结 | 业务 养老金查询 | ✓身份证号=3301**********0178]" in out.stdout
    log = tmp_path / "data" / "logs" / "chat.log"
    assert f"日志写入 {log}" in out.stderr  # said once, at start
    assert " INFO " in log.read_text("utf-8") and " INFO " not in out.stdout + out.stderr
    assert "330122196303150178" not in log.read_text("utf-8")  # logs are masked


def test_chat_status_line_names_what_it_waits_for_in_chinese(tmp_path):
    out = run("chat", "--engine", "rules", tmp_path=tmp_path,
              stdin="我要把社保从杭州转到苏州\n330122196303150178\n张伟\n/quit\n")
    assert out.returncode == 0, out.stderr
    assert "[状态 填写信息 | 业务 社保关系转移 |" in out.stdout
    assert "| 等待 身份证号]" in out.stdout and "| 等待 姓名]" in out.stdout
    assert "[状态 待确认 |" in out.stdout and "| 等待 确认提交]" in out.stdout
    assert "id_number" not in out.stdout and "collecting" not in out.stdout


def test_chat_names_an_unknown_command_and_keeps_the_business(tmp_path):
    out = run("chat", "--engine", "rules", tmp_path=tmp_path,
              stdin="我要把社保从杭州转到苏州\n/foo\n/QUTI\n330122196303150178\n/help\n"
                    "／quit\n不该读到这里\n")
    assert out.returncode == 0, out.stderr
    assert ("助手> 没有“/foo”这个命令。输入 /quit 退出，/reset 重新开始，/upload 照片路径 "
            "上传照片，/voice 录音路径 发送语音") in out.stdout
    assert "助手> 没有“/quti”这个命令。" in out.stdout
    assert "助手> 输入 /quit 退出" in out.stdout  # /help
    assert "| 等待 姓名]" in out.stdout  # the ID number after them was still taken
    assert out.stdout.count("助手>") == 5  # the full-width ／quit (a Chinese IME's) quit


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


def test_chat_voice_command_hears_a_clip(tmp_path):
    """``/voice PATH``: checked like the API does, heard by SI_ASR's recogniser (a real
    fake OpenAI-compatible server here), run as a spoken turn: an ID is read back."""
    pytest.importorskip("av", reason="needs the voice extra: pip install 'si_agent[voice]'")
    from si_agent.testing.fake_openai import FakeOpenAI

    clips = ROOT / "tests" / "voice" / "clips"
    not_audio = tmp_path / "note.wav"
    not_audio.write_bytes(b"just text")
    lines = ["/voice", f"/voice {tmp_path / 'missing.wav'}", f"/voice {not_audio}",
             f"/voice {clips / 'req01.wav'}", "张伟", f"/VOICE {clips / 'id01.wav'}", "/quit"]
    with FakeOpenAI() as fake:
        fake.push({"text": "我要辦理社保卡申領"}, {"text": "身份证号330122196303150178"})
        out = run("chat", "--user", "cli-voice", "--engine", "rules", tmp_path=tmp_path,
                  stdin="\n".join(lines) + "\n", SI_ASR="openai",
                  SI_ASR_BASE_URL=f"http://127.0.0.1:{fake._server.server_port}/v1")
    assert out.returncode == 0, out.stderr
    assert "请在 /voice 后写录音文件的路径" in out.stdout
    assert "找不到或打不开这个文件" in out.stdout
    assert "只能发送 WebM、Ogg、WAV、MP3 或 M4A 格式的语音。" in out.stdout
    assert "（听到：我要办理社保卡申领）" in out.stdout
    assert "（听到：身份证号3301**********0178）" in out.stdout
    assert "您说的身份证号后四位是0178，对吗？" in out.stdout


def test_chat_beside_a_process_holding_the_knowledge_base(tmp_path):
    """A server holds the Milvus Lite file (its LOCK): chat answers from a private copy,
    says so once, and prints no traceback."""
    import fcntl

    pytest.importorskip("milvus_lite")
    kb_dir = tmp_path / "kb"
    kb_dir.mkdir()
    for name in ("card-loss.md", "_terms.yaml"):
        shutil.copy(ROOT / "rag" / "knowledge" / name, kb_dir / name)
    env = {"SI_KNOWLEDGE": "milvus", "SI_KB_DIR": str(kb_dir)}
    built = run("kb", "ingest", tmp_path=tmp_path, **env)
    assert built.returncode == 0, built.stderr
    lock = tmp_path / "data" / "kb.db" / "LOCK"
    with open(lock) as held:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)  # as the server's Milvus Lite does
        out = run("chat", "--engine", "rules", tmp_path=tmp_path,
                  stdin="社保卡临时挂失会自动解挂吗\n/quit\n", **env)
    assert out.returncode == 0, out.stderr
    assert out.stderr.count("正由另一个进程（如正在运行的服务）使用，本次对话使用它的副本") == 1
    assert "Traceback" not in out.stdout + out.stderr
    assert "解挂" in out.stdout.split("您>", 1)[1]
    assert "知识库暂时无法使用" not in out.stdout
    log = (tmp_path / "data" / "logs" / "chat.log").read_text("utf-8")
    assert "Traceback" not in log and "held by another process; using a copy" in log


@pytest.mark.parametrize("command", [["rpa", "discover", "http://127.0.0.1:9/form"],
                                     ["agent", "run", "--url", "http://127.0.0.1:9/",
                                      "--goal", "申领社保卡"]])
def test_browser_commands_name_a_missing_browser(tmp_path, command):
    out = run(*command, tmp_path=tmp_path, SI_RPA_CHROMIUM=str(tmp_path / "no-chromium"))
    assert out.returncode == 2
    assert out.stderr.strip() == (f"error: the browser {tmp_path / 'no-chromium'} is not there: "
                                  "install Debian's chromium (apt-get install chromium) or set "
                                  "SI_RPA_CHROMIUM to a Chromium binary")


def test_validate_resolves_a_relative_directory_against_the_callers_cwd(tmp_path):
    shutil.copytree(ROOT / "businesses", tmp_path / "mine")
    env = {**os.environ, "SI_DATA_DIR": str(tmp_path / "data"), "SI_KNOWLEDGE": "none",
           "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    out = subprocess.run([sys.executable, "-m", "si_agent.cli", "validate", "mine"],
                         capture_output=True, text=True, timeout=120, cwd=tmp_path, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == ("ok: 13 businesses in mine; assistant texts: _assistant.yaml; "
                                  "moderation list: built-in default (55 words)")


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_run_sh_runs_the_command_in_the_callers_cwd(tmp_path):
    # A copy of the repository's scripts with a .venv already installed, whose si-agent
    # reports where it runs: `scripts/run.sh validate mine` from another directory must
    # check that directory's mine/, not the repository's.
    repo = tmp_path / "repo"
    (repo / "scripts").mkdir(parents=True)
    for name in ("run.sh", "venv.sh"):
        shutil.copy(ROOT / "scripts" / name, repo / "scripts" / name)
    (repo / "requirements").mkdir()
    shutil.copy(ROOT / "requirements" / "run.lock", repo / "requirements" / "run.lock")
    shutil.copy(ROOT / "pyproject.toml", repo / "pyproject.toml")
    bin_dir = repo / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "python").symlink_to(sys.executable)
    stamp = hashlib.sha256((repo / "requirements" / "run.lock").read_bytes()
                           + (repo / "pyproject.toml").read_bytes()).hexdigest()
    (repo / ".venv" / ".si-installed").write_text(f"run {stamp}\n", encoding="utf-8")
    fake = bin_dir / "si-agent"
    fake.write_text('#!/bin/sh\necho "cwd=$PWD"\necho "args=$*"\necho "data=$SI_DATA_DIR"\n',
                    encoding="utf-8")
    fake.chmod(0o755)
    caller = tmp_path / "elsewhere"
    caller.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "SI_DATA_DIR"}
    out = subprocess.run(["bash", str(repo / "scripts" / "run.sh"), "validate", "mine"],
                         capture_output=True, text=True, timeout=60, cwd=caller, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [f"cwd={caller}", "args=validate mine",
                                       f"data={repo}/data"]


def _guide_section(title: str) -> str:
    text = (ROOT / "docs" / "businesses.zh.md").read_text("utf-8")
    start = text.index(title)
    return text[start:text.index("\n### ", start + 1)]


def test_the_staff_guides_chat_example_is_what_chat_prints(tmp_path):
    section = _guide_section("### 9.4 ")
    block = section.split("$ scripts/run.sh chat\n", 1)[1].split("```", 1)[0]
    said = [line[len("您> "):] for line in block.splitlines() if line.startswith("您> ")]
    assert said == ["查养老金", "330122196303150178", "/quit"]
    out = run("chat", tmp_path=tmp_path, stdin="\n".join(said) + "\n")
    assert out.returncode == 0, out.stderr
    # Every line shown but the greeting's (elided) and the payment's (dated by today)
    for line in block.splitlines():
        line = line.removeprefix("您> ").removeprefix("助手> ")
        if line and "……" not in line and "年" not in line and line not in said:
            assert line in out.stdout, line


def test_the_staff_guides_replay_example_passes_from_its_directory(tmp_path):
    section = _guide_section("### 9.4 ")
    transcript = section.split("```yaml\n", 1)[1].split("```", 1)[0]
    (tmp_path / "dialogues").mkdir()
    (tmp_path / "dialogues" / "pension_query__try.yaml").write_text(transcript, "utf-8")
    env = {**os.environ, "SI_DATA_DIR": str(tmp_path / "data"), "SI_KNOWLEDGE": "none",
           "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    for target in ("dialogues/pension_query__try.yaml", "dialogues"):
        out = subprocess.run([sys.executable, "-m", "si_agent.cli", "replay", target],
                             capture_output=True, text=True, timeout=120, cwd=tmp_path, env=env)
        assert (out.returncode, out.stdout) == (0, "1 passed, 0 failed\n"), out.stderr
