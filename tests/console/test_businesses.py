"""The console's businesses screen: validation as `si-agent validate`, a preview chat
over the YAML as edited, and saving on one machine (backup, audit, restart note)."""

from __future__ import annotations

import html
import re
import shutil
from pathlib import Path

import pytest

from si_agent.server import create_app
from tests.console.conftest import ROOT, Bearer, console_settings, csrf, token

STAFF = Bearer("li", ["staff"])
FILE = "social_transfer.yaml"
_BASED_ON = re.compile(r'name="based_on" value="([0-9a-f]{64})"')


@pytest.fixture
def folder(tmp_path) -> Path:
    copy = tmp_path / "businesses"
    shutil.copytree(ROOT / "businesses", copy)
    return copy


@pytest.fixture
def settings(tmp_path, folder):
    return console_settings(tmp_path / "data", business_dir=folder)


@pytest.fixture
def client(settings):
    return create_app(settings).test_client()


def text_of(page) -> str:
    return html.unescape(page.get_data(as_text=True))


def form(client, **data) -> dict:
    page = client.get(f"/console/businesses/{FILE}", headers=STAFF)
    return {"csrf_token": csrf(client, f"/console/businesses/{FILE}", headers=STAFF),
            "based_on": _BASED_ON.search(page.get_data(as_text=True)).group(1), **data}


def test_the_list_says_which_files_pass(client, folder):
    page = client.get("/console/businesses", headers=STAFF)
    assert page.status_code == 200
    text = text_of(page)
    assert "全部通过检查" in text and FILE in text and "社保关系转移" in text
    (folder / "broken.yaml").write_text("id: broken\nname: 坏的\n", encoding="utf-8")
    text = text_of(client.get("/console/businesses", headers=STAFF))
    assert "broken.yaml" in text and "处错误" in text


def test_a_file_shows_its_yaml_and_its_errors_at_their_line(client, folder):
    path = folder / FILE
    original = path.read_text(encoding="utf-8")
    path.write_text(original.replace("name: ", "name：", 1), encoding="utf-8")
    page = client.get(f"/console/businesses/{FILE}", headers=STAFF)
    assert page.status_code == 200
    errors = text_of(page).split('data-testid="business-errors"', 1)[1].split("</section>")[0]
    assert f"{path}:" in errors
    assert client.get("/console/businesses/..%2Fsecret.yaml", headers=STAFF).status_code == 404
    assert client.get("/console/businesses/_assistant.yaml", headers=STAFF).status_code == 404


def test_the_preview_chat_runs_the_edited_yaml_and_touches_nothing(client, folder):
    path = folder / FILE
    original = path.read_text(encoding="utf-8")
    edited = original.replace("请提供您的18位身份证号码", "请告诉我您的身份证号（预览版）")
    assert edited != original, "the prompt the test edits is in the file"
    first = client.post(f"/console/businesses/{FILE}/preview", headers=STAFF,
                        data=form(client, content=edited, message="我要转社保"))
    assert first.status_code == 200
    second = client.post(f"/console/businesses/{FILE}/preview", headers=STAFF, data=form(
        client, content=edited, message="从杭州转到苏州", said=["我要转社保"]))
    text = text_of(second)
    preview = text.split('data-testid="preview"', 1)[1].split("</div>", 1)[0]
    assert preview.count("市民：") == 2 and "请告诉我您的身份证号（预览版）" in preview
    assert path.read_text(encoding="utf-8") == original  # a preview saves nothing
    # A long file (a comment of 28,000 Chinese characters: 250 KB URL-encoded) is
    # previewed: the API's 64 KB request limit is not the editor's.
    long = edited + "# " + "说明" * 14_000 + "\n"
    longer = client.post(f"/console/businesses/{FILE}/preview", headers=STAFF,
                         data=form(client, content=long, message="我要转社保"))
    assert longer.status_code == 200, text_of(longer)[:300]
    broken = client.post(f"/console/businesses/{FILE}/preview", headers=STAFF,
                         data=form(client, content="id: [", message="你好"))
    assert broken.status_code == 400 and "无法预览" in text_of(broken)


def test_saving_checks_the_folder_keeps_a_backup_and_is_audited(client, folder, settings):
    path = folder / FILE
    original = path.read_text(encoding="utf-8")
    bad = client.post(f"/console/businesses/{FILE}", headers=STAFF,
                      data=form(client, content=original.replace("fields:", "fieldz:", 1)))
    assert bad.status_code == 400 and "未保存" in text_of(bad)
    assert path.read_text(encoding="utf-8") == original
    edited = original.replace("请提供您的18位身份证号码", "请告诉我您的身份证号")
    saved = client.post(f"/console/businesses/{FILE}", headers=STAFF,
                        data=form(client, content=edited))
    assert saved.status_code == 303
    assert path.read_text(encoding="utf-8") == edited
    backups = list((settings.data_dir / "businesses_backup").glob("social_transfer.*.yaml"))
    assert [b.read_text(encoding="utf-8") for b in backups] == [original]
    page = text_of(client.get(saved.headers["Location"], headers=STAFF))
    assert "重启服务后" in page
    entry = client.application.config["SI_CONTROLLER"].audit.query(limit=1)[0]
    assert entry.actor == "li" and entry.action.value == "business_saved" and entry.target == FILE
    stale = client.post(f"/console/businesses/{FILE}", headers=STAFF, data={
        **form(client, content=original), "based_on": "0" * 64})
    assert stale.status_code == 409 and path.read_text(encoding="utf-8") == edited


def test_roles_csrf_and_several_machines(client, tmp_path, folder):
    citizen = {"Authorization": f"Bearer {token('amy', [])}"}
    assert client.get("/console/businesses", headers=citizen).status_code == 403
    original = (folder / FILE).read_text(encoding="utf-8")
    no_csrf = client.post(f"/console/businesses/{FILE}", headers=STAFF,
                          data={"content": "x: 1"})
    assert no_csrf.status_code == 400 and (folder / FILE).read_text(encoding="utf-8") == original
    multi = create_app(console_settings(
        tmp_path / "data2", business_dir=folder, session_store="redis",
        redis_url="redis://127.0.0.1:6379/15", redis_prefix=f"si-test-biz-{tmp_path.name}:",
    )).test_client()
    page = multi.get(f"/console/businesses/{FILE}", headers=STAFF)
    assert page.status_code == 200 and 'data-testid="business-save"' not in page.get_data(
        as_text=True)
    refused = multi.post(f"/console/businesses/{FILE}", headers=STAFF, data=form(
        multi, content=original.replace("社保", "社保")))
    assert refused.status_code == 404
