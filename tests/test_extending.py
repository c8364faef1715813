"""docs/extending.md runs as written: its code registers a field type, a step
handler and an executor kind; its business file loads and a dialogue reaches done."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from si_agent.config.loader import check_directory
from si_agent.config.settings import Settings
from si_agent.engine.rules import RuleEngine
from si_agent.executor import Executors
from si_agent.flow.controller import Controller
from si_agent.session import MemoryStore

ROOT = Path(__file__).resolve().parents[1]
GUIDE = ROOT / "docs" / "extending.md"


def blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", GUIDE.read_text(encoding="utf-8"), re.S)


@pytest.fixture(scope="module")
def registered():
    """Run the guide's Python blocks once (registries are process-wide)."""
    for code in blocks("python"):
        exec(compile(code, str(GUIDE), "exec"), {"__name__": "extending_example"})


@pytest.fixture
def catalog(registered, tmp_path):
    (tmp_path / "businesses").mkdir()
    [yaml_text] = blocks("yaml")
    (tmp_path / "businesses" / "address_filing.yaml").write_text(yaml_text, encoding="utf-8")
    businesses, errors = check_directory(tmp_path / "businesses")
    assert errors == []
    return businesses


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
    with Executors(settings) as executors:
        ctl = Controller(catalog, MemoryStore(), RuleEngine(catalog), executors)
        script = [
            ("我要做通讯地址备案", "step_executing", "请上传居住证明"),
            ("/home/me/租房合同.docx", "step_executing", "请上传照片或PDF格式的居住证明"),
            ("/home/me/租房合同.pdf", "collecting", "请提供您的姓名"),
            ("张伟", "collecting", "6位邮政编码"),
            ("邮编31001", "collecting", "邮政编码应为6位数字，例如310000"),
            ("310012", "collecting", "请提供详细的通讯地址"),
            ("浙江省杭州市西湖区文三路100号", "confirming", "· 邮政编码：310012"),
            ("确认", "done", "通讯地址备案已提交，受理编号：OB"),
        ]
        for message, state, needle in script:
            turn = ctl.handle("u", message)
            assert (turn.state, needle in turn.reply) == (state, True), turn.reply
    [record] = (tmp_path / "outbox").glob("*.json")
    saved = json.loads(record.read_text(encoding="utf-8"))
    assert saved["business"] == "address_filing"
    assert saved["values"]["postcode"] == "310012"
    assert saved["values"]["proof"] == {"file": "租房合同.pdf"}


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
