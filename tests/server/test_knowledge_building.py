"""While the knowledge base is being prepared in the background, the API serves.

A real Milvus Lite store built from a small corpus, by an embedder held at a gate:
while it waits, ``/readyz`` reports the knowledge base as ``building`` (readiness stays
green), a question gets the "being prepared" reply at once, and a business dialogue
goes on. Once the gate opens, the same question is answered from the documents.
"""

from __future__ import annotations

import threading
import time

from rag import texts
from rag.embedders.hashing import HashingEmbedder
from rag.knowledge_base import KnowledgeBase
from rag.store import MilvusStore
from tests.rag.conftest import SMALL_DOCS

QUESTION = "社保卡丢了怎么挂失"


class GatedEmbedder(HashingEmbedder):
    """The hashing embedder, embedding passages only once ``gate`` is set."""

    def __init__(self) -> None:
        super().__init__()
        self.gate = threading.Event()

    def embed(self, texts, *, query=False):
        if not query:
            assert self.gate.wait(60), "the test never opened the gate"
        return super().embed(texts, query=query)


def _knowledge(tmp_path) -> tuple[KnowledgeBase, GatedEmbedder]:
    corpus = tmp_path / "docs"
    corpus.mkdir()
    for name, text in SMALL_DOCS.items():
        (corpus / f"{name}.md").write_text(text, encoding="utf-8")
    embedder = GatedEmbedder()
    store = MilvusStore(str(tmp_path / "kb.db"), "si_knowledge")
    return KnowledgeBase(store, embedder, kb_dir=corpus), embedder


def test_questions_wait_for_nothing_while_the_knowledge_base_builds(app, client, login,
                                                                    tmp_path):
    kb, embedder = _knowledge(tmp_path)
    app.config["SI_CONTROLLER"].knowledge = kb
    kb.prepare()
    try:
        ready = client.get("/readyz")
        assert ready.status_code == 200 and ready.get_json()["status"] == "ready"
        check = ready.get_json()["checks"]["knowledge_base"]
        assert check["state"] == "building" and check["ok"] is False
        assert ready.get_json()["degraded"] == ["knowledge_base"]

        headers = login("building")
        started = time.monotonic()
        turn = client.post("/api/chat", json={"message": QUESTION}, headers=headers).get_json()
        assert time.monotonic() - started < 5
        assert texts.BUILDING in turn["reply"] and "来源" not in turn["reply"]
        # A business dialogue is not held up.
        turn = client.post("/api/chat", json={"message": "我要把社保从杭州转到苏州"},
                           headers=login("business")).get_json()
        assert turn["business"]["id"] == "social_transfer" and turn["state"] == "collecting"
    finally:
        embedder.gate.set()
    deadline = time.monotonic() + 60
    while kb.status()["state"] == "building":
        assert time.monotonic() < deadline, "the knowledge base never became ready"
        time.sleep(0.1)
    assert client.get("/readyz").get_json()["checks"]["knowledge_base"]["state"] == "ready"
    turn = client.post("/api/chat", json={"message": QUESTION}, headers=headers).get_json()
    assert "来源：《社保卡挂失小指南》" in turn["reply"], turn["reply"]


def test_a_failed_build_ends_building_and_is_reported(app, client, tmp_path):
    kb, embedder = _knowledge(tmp_path)
    (tmp_path / "kb.db").write_bytes(b"not a database")  # a plain file where the store goes
    app.config["SI_CONTROLLER"].knowledge = kb
    kb.prepare()
    deadline = time.monotonic() + 30
    while kb.status()["state"] == "building":
        assert time.monotonic() < deadline
        time.sleep(0.05)
    check = client.get("/readyz").get_json()["checks"]["knowledge_base"]
    assert check["state"] == "unavailable" and "plain file" in check["detail"]
    assert kb.answer(QUESTION).text == texts.APOLOGY
