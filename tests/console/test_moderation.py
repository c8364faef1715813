"""The console's sensitive-word screen: the list in use, its hits, editing, versions.

Every test edits a copy of the business folder (the console writes its
``_moderation.yaml``); the citizen's side is the real chat API of the same app.
"""

from __future__ import annotations

import html
import re
import shutil
from pathlib import Path

import pytest

from si_agent.moderation.live import LiveWordList, digest
from si_agent.moderation.words import MODERATION_FILE
from si_agent.server import create_app
from tests.console.conftest import ROOT, Bearer, console_settings, csrf, token

STAFF = Bearer("li", ["staff"])
DEFAULT = (ROOT / "si_agent" / "data" / "moderation.yaml").read_text(encoding="utf-8")
# The default list with one more refused category: a word no business or reply contains.
EDITED = DEFAULT.replace("allow:\n", """  - id: test_refuse
    label: 测试拒绝
    action: refuse
    words: [蓝莓果酱暗号]
allow:
""")
_BASED_ON = re.compile(r'name="based_on" value="([0-9a-f]{64})"')


@pytest.fixture
def folder(tmp_path) -> Path:
    copy = tmp_path / "businesses"
    shutil.copytree(ROOT / "businesses", copy)
    (copy / MODERATION_FILE).unlink(missing_ok=True)
    return copy


@pytest.fixture
def app(tmp_path, folder):
    return create_app(console_settings(tmp_path / "data", business_dir=folder))


@pytest.fixture
def client(app):
    return app.test_client()


def text_of(page) -> str:
    return html.unescape(page.get_data(as_text=True))


def based_on(client) -> str:
    return _BASED_ON.search(client.get("/console/moderation", headers=STAFF).get_data(
        as_text=True)).group(1)


def post(client, path: str, content: str, base: str | None = None):
    return client.post(path, headers=STAFF, data={
        "csrf_token": csrf(client, "/console/moderation", headers=STAFF),
        "content": content, "based_on": base if base is not None else based_on(client)})


def chat(client, user: str, message: str) -> dict:
    auth = client.post("/api/token", json={"user_id": user}).get_json()["access_token"]
    return client.post("/api/chat", json={"message": message},
                       headers={"Authorization": f"Bearer {auth}"}).get_json()


def test_the_page_shows_the_default_list_and_the_hits_of_the_last_days(client):
    chat(client, "amy", "你们这帮王八蛋，我的养老金呢")  # masked
    chat(client, "bob", "我想约炮")  # refused
    page = client.get("/console/moderation", headers=STAFF)
    assert page.status_code == 200
    text = text_of(page)
    assert "si_agent/data/moderation.yaml" in text and "内置默认词表" in text
    assert "辱骂" in text and "打码（以＊代替）" in text and "自伤倾向" in text
    counts = text.split('data-testid="moderation-counts"', 1)[1].split("</table>", 1)[0]
    assert "市民消息" in counts and "辱骂" in counts and "色情" in counts
    assert "王八蛋" not in counts and "约炮" not in counts  # categories, never the text
    assert DEFAULT.splitlines()[0] in text  # the editor holds the file in use


def test_check_reports_errors_at_file_and_line_and_saves_nothing(client, folder):
    broken = EDITED.replace("words: [蓝莓果酱暗号]", "words: [蓝莓果酱暗号, 藍莓果醬暗號]")
    page = post(client, "/console/moderation/check", broken)
    assert page.status_code == 400
    text = text_of(page)
    line = broken.splitlines().index("    words: [蓝莓果酱暗号, 藍莓果醬暗號]") + 1
    assert f"{folder / MODERATION_FILE}:{line}" in text and "listed twice" in text
    assert not (folder / MODERATION_FILE).exists()
    assert post(client, "/console/moderation", broken).status_code == 400
    assert not (folder / MODERATION_FILE).exists()
    fine = post(client, "/console/moderation/check", EDITED)
    assert fine.status_code == 200 and "检查通过" in text_of(fine)
    assert not (folder / MODERATION_FILE).exists()


def test_a_word_hitting_a_business_name_is_refused(client, folder):
    page = post(client, "/console/moderation", EDITED.replace("[蓝莓果酱暗号]", "[社保关系转移]"))
    assert page.status_code == 400 and "business" in text_of(page).lower()
    assert not (folder / MODERATION_FILE).exists()


def test_a_saved_list_is_used_at_once_versioned_and_audited(client, folder, app):
    before = chat(client, "carl", "我要转社保 蓝莓果酱暗号")
    assert before["state"] == "collecting"  # not listed yet: the business starts

    saved = post(client, "/console/moderation", EDITED)
    assert saved.status_code == 303
    assert saved.headers["Location"].endswith("/console/moderation")  # the notice is flashed
    assert (folder / MODERATION_FILE).read_text(encoding="utf-8") == EDITED

    refused = chat(client, "dora", "我要转社保 蓝莓果酱暗号")
    assert refused["state"] == "idle" and "社保关系转移" not in refused["reply"]

    page = text_of(client.get(saved.headers["Location"], headers=STAFF))
    assert "已保存为版本" in page and f"{folder / MODERATION_FILE}" in page
    assert "已保存为版本" not in text_of(client.get("/console/moderation", headers=STAFF))
    spoofed = text_of(client.get("/console/moderation?saved=../../../etc/passwd", headers=STAFF))
    assert "已保存为版本" not in spoofed and "etc/passwd" not in spoofed
    versions = page.split('data-testid="moderation-versions"', 1)[1].split("</table>", 1)[0]
    assert versions.count("<tr>") == 3  # header + the new list + the default it replaced
    assert "li" in versions and "控制台首次保存前的词表" in versions and "使用中" in versions

    staff = [e for e in app.config["SI_CONTROLLER"].audit.query(limit=50) if e.event == "staff"]
    assert staff[0].actor == "li" and staff[0].action.value == "moderation_saved"
    assert staff[0].target == "_moderation.yaml" and "words" in staff[0].detail


def test_a_save_based_on_a_changed_list_is_refused(client, folder):
    stale = based_on(client)
    assert post(client, "/console/moderation", EDITED).status_code == 303
    again = post(client, "/console/moderation", EDITED.replace("蓝莓果酱暗号", "草莓果酱暗号"),
                 base=stale)
    assert again.status_code == 409 and "已被他人修改" in text_of(again)
    assert "草莓果酱暗号" in text_of(again)  # what was typed is not lost
    assert (folder / MODERATION_FILE).read_text(encoding="utf-8") == EDITED


def test_an_earlier_version_is_restored(client, folder, app):
    assert post(client, "/console/moderation", EDITED).status_code == 303
    editor = app.config["SI_MODERATION_EDITOR"]
    first = editor.versions()[-1]
    assert first.content == DEFAULT and first.actor == "-"
    page = client.get(f"/console/moderation/versions/{first.id}", headers=STAFF)
    assert page.status_code == 200 and "恢复为此版本" in text_of(page)
    restored = client.post(f"/console/moderation/versions/{first.id}/restore", headers=STAFF,
                           data={"csrf_token": csrf(client, "/console/moderation", headers=STAFF),
                                 "based_on": digest(EDITED)})
    assert restored.status_code == 303
    assert (folder / MODERATION_FILE).read_text(encoding="utf-8") == DEFAULT
    assert chat(client, "erin", "我要转社保 蓝莓果酱暗号")["state"] == "collecting"
    newest = app.config["SI_CONTROLLER"].audit.query(limit=5)[0]
    assert newest.action.value == "moderation_restored" and first.id in newest.detail
    assert client.get("/console/moderation/versions/..%2F..%2Fetc", headers=STAFF).status_code == 404


def test_another_process_picks_up_a_saved_list(tmp_path, folder):
    now = [0.0]
    other = LiveWordList(folder, recheck=2.0, clock=lambda: now[0])
    assert not other.check("蓝莓果酱暗号", "input").refused
    (folder / MODERATION_FILE).write_text(EDITED, encoding="utf-8")
    now[0] = 1.0
    assert not other.check("蓝莓果酱暗号", "input").refused  # not looked at again yet
    now[0] = 2.5
    assert other.check("蓝莓果酱暗号", "input").refused
    # A file with errors is not used: the list before it stays.
    (folder / MODERATION_FILE).write_text(EDITED + "  - 不是列表\n", encoding="utf-8")
    now[0] = 5.0
    assert other.check("蓝莓果酱暗号", "input").refused
    (folder / MODERATION_FILE).unlink()  # back to the packaged default
    now[0] = 8.0
    assert not other.check("蓝莓果酱暗号", "input").refused
    assert other.check("我想约炮", "input").refused


def test_citizens_csrf_and_size(client, folder):
    citizen = {"Authorization": f"Bearer {token('amy', [])}"}
    assert client.get("/console/moderation", headers=citizen).status_code == 403
    no_csrf = client.post("/console/moderation", headers=STAFF,
                          data={"content": EDITED, "based_on": based_on(client)})
    assert no_csrf.status_code == 400 and not (folder / MODERATION_FILE).exists()
    # A list of 1,500 Chinese words is ~90 KB URL-encoded: over the API's request limit,
    # not over the editor's.
    words = ["".join(chr(0x5000 + 4 * i + k) for k in range(4)) for i in range(1500)]
    many = DEFAULT.replace("allow:\n", f"""  - id: many
    label: 大量词
    action: refuse
    words: [{", ".join(words)}]
allow:
""")
    checked = post(client, "/console/moderation/check", many)
    assert checked.status_code == 200, text_of(checked)[:300]
    huge = post(client, "/console/moderation", "# " + "字" * 700_000)
    assert huge.status_code == 413 and "过大" in text_of(huge)
    assert client.get("/console/moderation/versions/nope", headers=STAFF).status_code == 404


def test_several_machines_only_show_the_list(tmp_path, folder):
    settings = console_settings(tmp_path / "data", business_dir=folder, session_store="redis",
                                redis_url="redis://127.0.0.1:6379/15",
                                redis_prefix=f"si-test-moderation-{tmp_path.name}:")
    client = create_app(settings).test_client()
    page = client.get("/console/moderation", headers=STAFF)
    assert page.status_code == 200 and "随部署镜像发布" in text_of(page)
    assert 'name="content"' not in page.get_data(as_text=True)
    refused = client.post("/console/moderation", headers=STAFF, data={
        "csrf_token": csrf(client, "/console/moderation", headers=STAFF), "content": EDITED})
    assert refused.status_code == 404 and not (folder / MODERATION_FILE).exists()
