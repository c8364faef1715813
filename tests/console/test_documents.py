"""Knowledge documents in the console: upload, preview, publish, replace, delete; bad files.

``client`` is the app without a knowledge base (uploads are previewed, not published);
``kb_client`` the app over the shipped corpus, where publishing indexes a document's
chunks only and the citizen's answer cites it. The documents are made by
``tests/documents/govdocs.py``.
"""

from __future__ import annotations

import io
import random
import re
import zipfile

import pytest

from tests.console.conftest import Bearer, csrf
from tests.documents import govdocs

STAFF = Bearer("li", ["staff"])
META = {"source": "成都市人力资源和社会保障局 蓉人社发〔2026〕18号", "as_of": "2026-01",
        "businesses": ["unemployment_benefit"]}
QUESTION = "2026年失业保险金标准调整了吗"


def upload(client, data: bytes, filename: str, path: str = "/console/documents", **meta):
    token_ = csrf(client, "/console/documents", headers=STAFF)
    form = {**META, "csrf_token": token_, **meta, "file": (io.BytesIO(data), filename)}
    return client.post(path, data=form, headers=STAFF, content_type="multipart/form-data")


def library(app):
    from si_agent.server.console.documents import _library

    with app.test_request_context():
        return _library()


def staff_entries(app, action: str):
    entries = app.config["SI_CONTROLLER"].audit.query(limit=200)
    return [e for e in entries if e.event == "staff" and e.action == action]


def doc_id_of(answer) -> tuple[str, int]:
    m = re.search(r"/console/documents/(doc-[0-9a-f]{8})\?version=(\d+)", answer.headers["Location"])
    assert m, answer.headers.get("Location")
    return m.group(1), int(m.group(2))


# -- upload and preview (no knowledge base) ---------------------------------------------


@pytest.mark.parametrize("maker,filename,fmt", [
    (govdocs.docx, "通知.docx", "docx"), (govdocs.pdf, "通知.pdf", "pdf"),
    (govdocs.xlsx, "标准.xlsx", "xlsx"), (govdocs.html, "通知.html", "html"),
    (govdocs.markdown, "通知.md", "markdown"),
])
def test_an_upload_is_a_draft_whose_text_and_chunks_are_shown(app, client, maker, filename, fmt):
    data = maker()
    answer = upload(client, data, filename, title="")
    assert answer.status_code == 303, answer.get_data(as_text=True)[:500]
    doc_id, version = doc_id_of(answer)
    page = client.get(answer.headers["Location"], headers=STAFF)
    text = page.get_data(as_text=True)
    assert page.status_code == 200
    assert 'data-state="draft"' in text and "已上传为草稿" in text
    assert govdocs.TABLE_ROW in text  # the table, a row with its headers
    assert text.count('data-testid="chunk"') >= 2
    record = library(app).record(doc_id)
    assert record.latest.state == "draft" and record.latest.format == fmt
    if fmt != "xlsx":  # a sheet has no title: it came from the file (its heading, <title>)
        assert record.latest.meta.title.startswith(govdocs.TITLE)
    assert library(app).original_path(record.latest).read_bytes() == data
    (entry,) = staff_entries(app, "document_uploaded")
    assert entry.actor == "li" and entry.target == doc_id and entry.outcome == "succeeded"
    # Without a knowledge base, publishing says why and changes nothing.
    publish = client.post(f"/console/documents/{doc_id}/publish", headers=STAFF,
                          data={"csrf_token": csrf(client, "/console/documents", headers=STAFF),
                                "version": version})
    assert publish.status_code == 503 and "没有启用知识库" in publish.get_data(as_text=True)
    assert library(app).record(doc_id).latest.state == "draft"


def test_a_notice_comes_from_what_staff_did_not_from_the_link(app, client):
    answer = upload(client, govdocs.markdown(), "通知.md")
    assert "notice" not in answer.headers["Location"]
    assert "已上传为草稿" in client.get(answer.headers["Location"], headers=STAFF).get_data(
        as_text=True)
    spoofed = client.get("/console/documents?notice=请立即拨打110", headers=STAFF)
    assert "请立即拨打110" not in spoofed.get_data(as_text=True)


def test_the_original_downloads_as_an_attachment(app, client):
    doc_id, version = doc_id_of(upload(client, govdocs.docx(), "通知.docx"))
    got = client.get(f"/console/documents/{doc_id}/original?version={version}", headers=STAFF)
    assert got.status_code == 200 and got.data == govdocs.docx()
    assert got.headers["Content-Type"] == "application/octet-stream"
    assert got.headers["Content-Disposition"].startswith("attachment")


def _zip_bomb() -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("[Content_Types].xml", "<Types/>")
        z.writestr("word/document.xml", b"0" * (300 * 2**20))
    return out.getvalue()


def _broken_xlsx() -> bytes:
    data = bytearray(govdocs.xlsx())
    data[len(data) // 3: len(data) // 3 + 200] = b"\0" * 200  # a member's bytes destroyed
    return bytes(data)


BAD_FILES = [
    ("encrypted.pdf", lambda: govdocs.pdf(password="mima1234"), 422, "设置了打开密码"),
    ("scanned.pdf", lambda: govdocs.pdf(scanned=True), 422, "没有可提取的文字"),
    ("通知.pdf", lambda: b"MZ\x90\x00\x03" + bytes(2000), 415, "Windows 可执行程序"),
    ("通知.docx", lambda: open("/bin/true", "rb").read(), 415, "Linux 可执行程序"),
    ("通知.docx", lambda: govdocs.docx()[:4000], 422, "文件已损坏"),
    ("标准.xlsx", _broken_xlsx, 422, "已损坏"),
    ("通知.docx", _zip_bomb, 422, "压缩炸弹"),
    ("通知.pdf", govdocs.docx, 415, "内容是Word 文档"),
    ("通知.pdf", lambda: govdocs.pdf()[:3000], 422, "PDF"),
    ("setup.exe", lambda: b"MZ" + bytes(100), 415, "不支持 .exe 格式"),
    ("空.md", lambda: b"   \n", 422, "文件是空的"),
]


@pytest.mark.parametrize("filename,make,status,reason", BAD_FILES,
                         ids=[f"{n}:{r}" for n, _, _, r in BAD_FILES])
def test_a_bad_file_gets_a_clear_reason_and_changes_nothing(app, client, filename, make,
                                                            status, reason):
    answer = upload(client, make(), filename)
    text = answer.get_data(as_text=True)
    assert answer.status_code == status, text[:300]
    assert reason in text and "未上传" in text
    assert library(app).records() == []
    originals = library(app).root / "originals"
    assert not originals.exists() or not any(originals.rglob("*.*"))
    (entry,) = staff_entries(app, "document_uploaded")
    assert entry.outcome == "refused" and entry.actor == "li"


class Endless(io.RawIOBase):
    """A request body that says it is 200 MB and counts what is read of it."""

    SIZE = 200 * 2**20

    def __init__(self) -> None:
        self.read_bytes = 0
        self.position = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def seek(self, offset: int, whence: int = 0) -> int:
        self.position = self.SIZE + offset if whence == 2 else offset
        return self.position

    def tell(self) -> int:
        return self.position

    def readinto(self, buffer) -> int:
        n = min(len(buffer), self.SIZE - self.position)
        buffer[:n] = b"x" * n
        self.read_bytes += n
        self.position += n
        return n


def test_a_200_mb_upload_is_refused_without_being_read(app, client):
    token_ = csrf(client, "/console/documents", headers=STAFF)
    body = Endless()
    answer = client.post(
        "/console/documents", input_stream=body, headers={
            **STAFF, "X-CSRFToken": token_,
            "Content-Type": "multipart/form-data; boundary=xyz"})
    assert answer.request.content_length == 200 * 2**20
    assert answer.status_code == 413
    assert "超过 50 MB" in answer.get_data(as_text=True)
    assert body.read_bytes < 2**20
    assert library(app).records() == []


def test_the_configured_limit_is_the_one_applied(tmp_path):
    from si_agent.server import create_app
    from tests.console.conftest import console_settings

    app = create_app(console_settings(tmp_path, kb_upload_max_bytes=100_000))
    client = app.test_client()
    answer = upload(client, govdocs.docx() + b"\0" * 200_000, "通知.docx")
    assert answer.status_code == 413 and "超过 97.7 KB 的上限" in answer.get_data(as_text=True)
    assert library(app).records() == []


@pytest.mark.parametrize("meta,message", [
    ({"source": ""}, "请填写来源"),
    ({"as_of": "2026年1月"}, "核对日期"),
    ({"as_of": "2026-13"}, "核对日期"),
    ({"businesses": ["no_such_business"]}, "所选业务不存在"),
    ({"title": "长" * 201}, "标题不能超过"),
])
def test_bad_metadata_is_400_and_changes_nothing(app, client, meta, message):
    answer = upload(client, govdocs.docx(), "通知.docx", **meta)
    assert answer.status_code == 400 and message in answer.get_data(as_text=True)
    assert library(app).records() == []


def test_uploads_need_the_csrf_token_and_a_staff_role(app, client):
    form = {**META, "file": (io.BytesIO(govdocs.docx()), "通知.docx")}
    assert client.post("/console/documents", data=form, headers=STAFF).status_code == 400
    citizen = client.post("/api/token", json={"user_id": "citizen-9"}).get_json()["access_token"]
    headers = {"Authorization": f"Bearer {citizen}"}
    for path in ("/console/documents", "/console/documents/doc-00000000"):
        assert client.get(path, headers=headers).status_code == 403
    token_ = csrf(client, "/console/login")
    form = {**META, "csrf_token": token_, "file": (io.BytesIO(govdocs.docx()), "通知.docx")}
    assert client.post("/console/documents", data=form, headers=headers).status_code == 403
    assert client.post("/console/documents", data={**form, "file": (io.BytesIO(b"x"), "a.md")}
                       ).status_code == 401  # not signed in at all
    assert library(app).records() == []


def test_unknown_documents_and_versions_are_404(client):
    for path in ("/console/documents/doc-00000000", "/console/documents/../../etc",
                 "/console/documents/doc-0000000g/original?version=1"):
        answer = client.get(path, headers=STAFF)
        assert answer.status_code == 404, path


def test_fuzzed_uploads_never_fail_the_server(app, client):
    """Random bytes and every fixture cut short, under every accepted name: a page, never 500."""
    rng = random.Random(27)
    samples = [(govdocs.docx(), "a.docx"), (govdocs.pdf(), "a.pdf"), (govdocs.xlsx(), "a.xlsx"),
               (govdocs.html(), "a.html"), (govdocs.markdown(), "a.md")]
    cases = []
    for data, name in samples:
        for _ in range(4):
            cases.append((data[: rng.randrange(1, len(data))], name))
            flipped = bytearray(data)
            for _ in range(20):
                flipped[rng.randrange(len(flipped))] = rng.randrange(256)
            cases.append((bytes(flipped), name))
    for name in ("a.docx", "a.pdf", "a.xlsx", "a.html", "a.md"):
        cases.append((rng.randbytes(rng.randrange(1, 5000)), name))
        cases.append((b"PK\x03\x04" + rng.randbytes(3000), name))
        cases.append((b"%PDF-1.7\n" + rng.randbytes(3000), name))
    for data, name in cases:
        answer = upload(client, data, name)
        assert answer.status_code in {303, 400, 413, 415, 422}, (name, answer.status_code)
