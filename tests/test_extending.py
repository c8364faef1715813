"""docs/extending.md runs as written: its code blocks are the files of a plug-in
package (each block names its file in its first line) whose entry points are its
pyproject.toml block, installed the way pip does; its business file loads with
the new names, and a dialogue reaches done with a real photo uploaded through
the web page's API and through the terminal chat, while a typed file name is
refused."""

from __future__ import annotations

import base64
import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import tomllib
from PIL import Image

from si_agent.config.loader import check_directory
from si_agent.config.settings import Settings
from si_agent.engine.rules import RuleEngine
from si_agent.executor import Executors
from si_agent.flow.controller import Controller
from si_agent.session import MemoryStore
from si_agent.uploads import clean_image

ROOT = Path(__file__).resolve().parents[1]
GUIDE = ROOT / "docs" / "extending.md"
TYPED = "/home/me/租房合同.jpg"
REFUSED_TYPED = "请使用“上传照片”功能上传居住证明的照片"


def blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", GUIDE.read_text(encoding="utf-8"), re.S)


def files(language: str) -> dict[str, str]:
    """The guide's blocks of ``language`` by the file their first line names."""
    named = {}
    for code in blocks(language):
        first = code.splitlines()[0]
        assert first.startswith("# "), f"a {language} block without its file name: {first!r}"
        named[first[2:].strip()] = code
    return named


def photo() -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (160, 120), (230, 220, 200)).save(out, "JPEG")
    return out.getvalue()


@pytest.fixture(scope="module")
def bureau(tmp_path_factory) -> tuple[Path, Path]:
    """The guide's package (``src``) and its installed metadata with the entry points
    (``site``), as ``pip install my-bureau`` would leave them."""
    root = tmp_path_factory.mktemp("bureau")
    src, site = root / "src", root / "site"
    package = src / "my_bureau"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("", encoding="utf-8")
    python = files("python")
    assert {"my_bureau/fields.py", "my_bureau/steps.py", "my_bureau/outbox.py",
            "my_app.py"} == set(python)
    for name, code in python.items():
        if name.startswith("my_bureau/"):
            (src / name).write_text(code, encoding="utf-8")
    (root / "my_app.py").write_text(python["my_app.py"], encoding="utf-8")
    [toml] = files("toml").values()
    groups = tomllib.loads(toml)["project"]["entry-points"]
    info = site / "my_bureau-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: my-bureau\nVersion: 0.1\n",
                                   encoding="utf-8")
    (info / "entry_points.txt").write_text("".join(
        f"[{group}]\n" + "".join(f"{name} = {target}\n" for name, target in eps.items())
        for group, eps in groups.items()), encoding="utf-8")
    return src, site


@pytest.fixture(scope="module")
def registered(bureau):
    """The guide's my_app.py run once in this process (registries are process-wide)."""
    src, _ = bureau
    sys.path.insert(0, str(src))
    try:
        code = (src.parent / "my_app.py").read_text(encoding="utf-8")
        exec(compile(code, str(GUIDE), "exec"), {"__name__": "my_app"})
    finally:
        sys.path.remove(str(src))


@pytest.fixture
def businesses(tmp_path) -> Path:
    folder = tmp_path / "businesses"
    folder.mkdir()
    [yaml_text] = blocks("yaml")
    (folder / "address_filing.yaml").write_text(yaml_text, encoding="utf-8")
    return folder


@pytest.fixture
def catalog(registered, businesses):
    found, errors = check_directory(businesses)
    assert errors == []
    return found


def check_outbox(folder: Path, image: bytes) -> None:
    [record] = folder.glob("*.json")
    saved = json.loads(record.read_text(encoding="utf-8"))
    assert saved["business"] == "address_filing"
    assert saved["values"]["postcode"] == "310012"
    proof = saved["values"]["proof"]
    assert proof["media_type"] == "image/jpeg"
    assert base64.b64decode(proof["photo"]) == image  # the photo as cleaned


def test_the_guides_business_loads_with_the_new_names(catalog):
    b = catalog["address_filing"]
    assert b.field("postcode").type == "postcode"
    assert b.api.kind == "outbox" and b.steps[0].handler == "proof_check"


def test_bad_options_for_the_new_kind_are_located(registered, tmp_path):
    [yaml_text] = blocks("yaml")
    (tmp_path / "address_filing.yaml").write_text(
        yaml_text.replace("    folder: outbox\n", "    folder: outbox\n    colour: red\n"),
        encoding="utf-8")
    _, errors = check_directory(tmp_path)
    assert [str(e).split(": ", 1)[1] for e in errors] == [
        "api.options.colour: unknown option 'colour'; valid options: folder"]


def test_the_guides_dialogue(catalog, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    settings = Settings(business_dir=tmp_path / "businesses", data_dir=tmp_path / "data")
    image = clean_image(photo(), max_bytes=settings.upload_max_bytes,
                        max_pixels=settings.upload_max_pixels)
    with Executors(settings) as executors:
        ctl = Controller(catalog, MemoryStore(), RuleEngine(catalog), executors)
        script = [
            ("我要做通讯地址备案", "step_executing", "请上传居住证明"),
            (TYPED, "step_executing", REFUSED_TYPED),
            (image, "collecting", "请提供您的姓名"),
            ("张伟", "collecting", "6位邮政编码"),
            ("邮编31001", "collecting", "邮政编码应为6位数字，例如310000"),
            ("310012", "collecting", "请提供详细的通讯地址"),
            ("浙江省杭州市西湖区文三路100号", "confirming", "· 邮政编码：310012"),
            ("确认", "done", "通讯地址备案已提交，受理编号：OB"),
        ]
        for message, state, needle in script:
            turn = (ctl.handle("u", message) if isinstance(message, str)
                    else ctl.upload("u", message))
            assert (turn.state, needle in turn.reply) == (state, True), turn.reply
    check_outbox(tmp_path / "outbox", image.data)


def test_the_guides_upload_through_the_page(registered, businesses, tmp_path, monkeypatch):
    from si_agent.server import create_app

    monkeypatch.chdir(tmp_path)
    settings = Settings(business_dir=businesses, data_dir=tmp_path / "data", knowledge="none",
                        session_store="memory", jwt_secret="extending-guide-secret-0123456789")
    client = create_app(settings).test_client()
    token = client.post("/api/token", json={"user_id": "citizen"}).get_json()["access_token"]
    auth = {"Authorization": f"Bearer {token}"}

    def say(text: str) -> dict:
        return client.post("/api/chat", json={"message": text}, headers=auth).get_json()

    assert say("我要做通讯地址备案")["step"]["id"] == "proof"
    assert REFUSED_TYPED in say(TYPED)["reply"]
    sent = client.post("/api/upload", headers=auth, content_type="multipart/form-data",
                       data={"file": (io.BytesIO(photo()), "租房合同.jpg"), "step": "proof"})
    assert sent.status_code == 200, sent.get_json()
    turn = sent.get_json()
    assert turn["state"] == "collecting" and "居住证明已完成" in turn["reply"]
    for text in ("张伟", "310012", "浙江省杭州市西湖区文三路100号"):
        say(text)
    turn = say("确认")
    assert turn["state"] == "done", turn["reply"]
    [record] = (tmp_path / "outbox").glob("*.json")
    proof = json.loads(record.read_text(encoding="utf-8"))["values"]["proof"]
    assert Image.open(io.BytesIO(base64.b64decode(proof["photo"]))).size == (160, 120)


def test_the_guides_plugin_through_the_command_line(bureau, businesses, tmp_path):
    """Installed as a plug-in (entry points, no register_* call), in a fresh process."""
    src, site = bureau
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(src), str(site), str(ROOT)]),
           "SI_DATA_DIR": str(tmp_path / "data"), "SI_BUSINESS_DIR": str(businesses),
           "SI_SESSION_STORE": "memory", "SI_KNOWLEDGE": "none"}

    def cli(*args: str, stdin: str = "") -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "si_agent.cli", *args], input=stdin,
                              capture_output=True, text=True, timeout=120, cwd=tmp_path,
                              env=env)

    out = cli("validate", str(businesses))
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.startswith(f"ok: 1 businesses in {businesses}")
    image = tmp_path / "租房合同.jpg"
    image.write_bytes(photo())
    lines = ["我要做通讯地址备案", TYPED, f"/upload {image}", "张伟", "310012",
             "浙江省杭州市西湖区文三路100号", "确认", "/quit"]
    out = cli("chat", "--engine", "rules", stdin="\n".join(lines) + "\n")
    assert out.returncode == 0, out.stderr
    assert REFUSED_TYPED in out.stdout and "居住证明已完成" in out.stdout
    assert "通讯地址备案已提交，受理编号：OB" in out.stdout
    [record] = (tmp_path / "outbox").glob("*.json")
    proof = json.loads(record.read_text(encoding="utf-8"))["values"]["proof"]
    assert proof["media_type"] == "image/jpeg" and proof["photo"]


def test_the_guides_toolset_table_is_the_action_tables():
    from si_agent.core import actions as A

    documented: dict[str, list[str]] = {}
    for line in A.__doc__.split("which gives")[1].splitlines():
        m = re.match(r"\s{4}([a-z_, ]+?)\s{2,}(.+)$", line)
        if m:
            documented[m.group(1)] = [t.strip() for t in m.group(2).split(",")]
    guide: dict[str, list[str]] = {}
    for line in GUIDE.read_text(encoding="utf-8").splitlines():
        m = re.match(r"\| ([a-z_, ]+) \| ([a-z_\[\]&;<>, ]+) \|$", line)
        if m and m.group(1) != "state":
            tools = m.group(2).replace("&lt;", "<").replace("&gt;", ">")
            guide[m.group(1)] = [t.strip() for t in tools.split(",")]
    assert guide == documented
