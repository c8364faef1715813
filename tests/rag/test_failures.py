"""A broken store degrades answers to an apology and ``status()`` to not ok; never an exception."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rag import texts
from rag.embedders.hashing import HashingEmbedder
from rag.knowledge_base import KnowledgeBase
from rag.store import MilvusStore

from .conftest import ROOT

QUESTION = "社保卡丢了怎么挂失"

BUILD = """
import sys
from rag.embedders.hashing import HashingEmbedder
from rag.ingest import ingest
from rag.store import MilvusStore
ingest(MilvusStore(sys.argv[1], "si_knowledge"), HashingEmbedder(), sys.argv[2])
"""

HOLD = """
import sys
from pymilvus import MilvusClient
MilvusClient(sys.argv[1]).list_collections()
print("ready", flush=True)
sys.stdin.read()
"""


def _env() -> dict:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}


def _kb(uri: str, corpus: Path | None, **kw) -> KnowledgeBase:
    return KnowledgeBase(MilvusStore(uri, "si_knowledge", timeout=5), HashingEmbedder(),
                         kb_dir=corpus, **kw)


def _assert_degraded(kb: KnowledgeBase, *words: str) -> None:
    answer = kb.answer(QUESTION)
    assert answer is not None
    assert answer.text == texts.APOLOGY
    assert answer.sources == [] and answer.suggested_business_id is None
    status = kb.status()
    assert status["ok"] is False
    for w in words:
        assert w in status["detail"]


def test_a_plain_file_where_the_database_should_be(tmp_path, small_corpus):
    path = tmp_path / "kb.db"
    path.write_bytes(b"\x00garbage" * 100)
    _assert_degraded(_kb(str(path), small_corpus), "plain file")


def test_a_corrupt_database_directory(tmp_path, small_corpus):
    path = tmp_path / "kb.db"
    subprocess.run([sys.executable, "-c", BUILD, str(path), str(small_corpus)], check=True,
                   cwd=ROOT, env=_env(), timeout=180, capture_output=True)
    manifests = list(path.rglob("manifest.json*"))
    assert manifests
    for m in manifests:
        m.write_text("{not json", encoding="utf-8")
    _assert_degraded(_kb(str(path), small_corpus), str(path))


def test_a_database_locked_by_another_process(tmp_path, small_corpus, caplog):
    # Said as such (state "locked", what to do), found before Milvus Lite is asked:
    # it would log a traceback of its own and fail with "Open local milvus failed".
    path = tmp_path / "kb.db"
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(path)], cwd=ROOT, env=_env(),
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, text=True)
    try:
        assert holder.stdout.readline().strip() == "ready"
        kb = _kb(str(path), small_corpus)
        _assert_degraded(kb, "another process has it open", "SI_DATA_DIR")
        assert kb.status()["state"] == "locked"
        assert not [r for r in caplog.records if r.exc_info]
    finally:
        holder.stdin.close()
        try:
            holder.wait(timeout=30)
        except subprocess.TimeoutExpired:
            holder.kill()
            holder.wait()


def test_an_unreachable_server_is_quick_and_retried_later(small_corpus, monkeypatch):
    kb = _kb("http://127.0.0.1:1", small_corpus, retry_after=60)
    started = time.monotonic()
    _assert_degraded(kb, "127.0.0.1:1")
    assert time.monotonic() - started < 10
    attempts = []
    monkeypatch.setattr(kb.store, "client", lambda: attempts.append(1))
    assert kb.answer(QUESTION).text == texts.APOLOGY
    assert attempts == []  # within retry_after the dead server is not tried again
    kb._failed_at -= 61
    kb.answer(QUESTION)
    assert attempts  # after it, it is


def test_a_missing_collection_when_building_is_off(tmp_path, small_corpus):
    _assert_degraded(_kb(str(tmp_path / "kb.db"), small_corpus, build_missing=False),
                     "si-agent kb ingest")


def test_a_missing_knowledge_directory(tmp_path):
    _assert_degraded(_kb(str(tmp_path / "kb.db"), tmp_path / "nowhere"),
                     "knowledge directory not found")


def test_a_missing_database_is_built_on_first_use(tmp_path, small_corpus):
    kb = _kb(str(tmp_path / "fresh" / "kb.db"), small_corpus)
    answer = kb.answer(QUESTION)
    assert answer is not None and "来源：《社保卡挂失小指南》" in answer.text
    assert answer.suggested_business_id == "card_loss"
    assert kb.status()["ok"]


def test_unexpected_errors_still_end_in_an_apology(tmp_path, small_corpus, monkeypatch):
    kb = _kb(str(tmp_path / "kb.db"), small_corpus)
    assert kb.status()["ok"]

    def boom(*a, **kw):
        raise RuntimeError("bug")

    monkeypatch.setattr(kb.retriever, "search", boom)
    assert kb.answer(QUESTION).text == texts.APOLOGY


@pytest.mark.parametrize("question", ["", "   "])
def test_blank_questions_are_not_answered(tmp_path, small_corpus, question):
    assert _kb(str(tmp_path / "kb.db"), small_corpus).answer(question) is None
