"""The same code against a Milvus server URI (Milvus Lite's own gRPC server here)."""

from __future__ import annotations

import socket
import subprocess
import sys
import time

import pytest

from rag import texts
from rag.embedders.hashing import HashingEmbedder
from rag.knowledge_base import KnowledgeBase
from rag.store import MilvusStore


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def server(tmp_path):
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "milvus_lite", "server", "--data-dir", str(tmp_path / "server.db"),
         "--host", "127.0.0.1", "--port", str(port)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                break
        except OSError:
            if proc.poll() is not None:
                pytest.fail("milvus-lite server did not start")
            time.sleep(0.2)
    yield proc, f"http://127.0.0.1:{port}"
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def test_server_uri_builds_answers_and_degrades_when_the_server_goes(server, small_corpus):
    proc, uri = server
    kb = KnowledgeBase(MilvusStore(uri, "si_knowledge", timeout=5), HashingEmbedder(),
                       kb_dir=small_corpus, retry_after=0)
    answer = kb.answer("社保卡丢了怎么挂失")
    assert answer is not None and "来源：《社保卡挂失小指南》" in answer.text
    assert kb.status()["ok"]
    for mode in ("dense", "bm25", "hybrid"):
        assert kb.search("社保转移要什么材料", k=1, mode=mode)[0].doc_id == "transfer"

    proc.terminate()
    proc.wait(timeout=20)
    answer = kb.answer("社保卡丢了怎么挂失")
    assert answer is not None and answer.text == texts.APOLOGY
    assert kb.status()["ok"] is False
