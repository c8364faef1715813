"""The knowledge base breaks: answers degrade politely, dialogues go on, /readyz shows it.

Each test runs the real API (gunicorn, one worker: a Milvus Lite database opens in
one process only) on its own ``SI_DATA_DIR`` with the embedded Milvus Lite knowledge
base (``data/kb.db``, the model-free ``hashing`` embedder). The faults:

- ``locked``: another process (a real ``MilvusClient`` in a subprocess) opened
  ``kb.db`` first and holds it;
- ``plain file``: ``kb.db`` is a file of garbage, not a Milvus Lite directory;
- ``missing``: there is no ``kb.db`` and no knowledge directory to build it from.

In each, a knowledge question gets the knowledge base's Chinese apology (200, not a
500), ``/readyz`` stays ready (sessions work) but lists ``knowledge_base`` as
degraded with ``ok: false``, and a business dialogue completes with one application
in the demo backend. A healthy server answers the same question from a document,
so the apology is the fault's doing. And ``kb.db`` deleted under a running server
is no fault at all: the open database keeps answering, the next start rebuilds it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from .conftest import ROOT, demo_counts, stop

pytest.importorskip("pymilvus")
pytest.importorskip("milvus_lite")

APOLOGY = "抱歉，知识库暂时无法使用，请稍后再试或拨打12333咨询。"  # rag.texts.APOLOGY
QUESTION = "五险一金是什么"
ZHANG_WEI = "330122196303150178"
TRANSFER = [("我要转社保", "collecting"), ("从杭州转到苏州", "collecting"),
            (ZHANG_WEI, "collecting"), ("张伟", "confirming"), ("确认", "done")]

HOLD = """
import sys
from pymilvus import MilvusClient
MilvusClient(sys.argv[1]).list_collections()
print("holding", flush=True)
sys.stdin.read()
"""


@pytest.fixture
def holder(tmp_path) -> Iterator[Path]:
    """A second process that opened ``<data>/kb.db`` and keeps it open."""
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen([sys.executable, "-c", HOLD, str(data_dir / "kb.db")], cwd=ROOT,
                               env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, text=True)
    try:
        assert process.stdout.readline().strip() == "holding"
        yield data_dir
    finally:
        process.stdin.close()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _kb_server(api_server, data_dir: Path, **settings: str):
    return api_server(data_dir=data_dir, workers=1, KNOWLEDGE="milvus", EMBED_MODEL="hashing",
                      SESSION_STORE="sqlite", **settings)


def _assert_degraded_but_serving(server, state: str = "unavailable") -> None:
    headers = server.token("kb")
    res = server.chat(headers, QUESTION)
    assert res.status_code == 200, res.text
    assert APOLOGY in res.json()["reply"]
    assert res.json()["suggestion"] is None

    ready = server.get("/readyz")
    assert ready.status_code == 200, ready.text
    body = ready.json()
    assert body["status"] == "ready" and body["degraded"] == ["knowledge_base"]
    assert body["checks"]["knowledge_base"]["ok"] is False
    assert body["checks"]["knowledge_base"]["state"] == state
    assert body["checks"]["session_store"]["ok"] is True

    for message, state in TRANSFER:  # the same citizen goes on with a business
        res = server.chat(headers, message)
        assert res.status_code == 200, res.text
        assert res.json()["state"] == state
    done = res.json()
    assert [f["key"] for f in done["fields"] if f["status"] == "collected"] == [
        "from_city", "to_city", "id_number", "name"]
    assert done["result"]["application_no"] in done["reply"]
    assert demo_counts(server.data_dir, "social_transfer") == {"applications": 1, "calls": 1}
    # No 500 was logged, and no traceback (a lock is found before Milvus Lite is asked).
    assert "unhandled error" not in server.log_text()
    assert "Traceback" not in server.log_text()


def test_healthy_knowledge_base_answers_the_question(api_server, tmp_path):
    server = _kb_server(api_server, tmp_path / "data")
    res = server.chat(server.token(), QUESTION)
    assert res.status_code == 200, res.text
    assert "来源：《" in res.json()["reply"] and APOLOGY not in res.json()["reply"]
    ready = server.get("/readyz").json()
    assert ready["checks"]["knowledge_base"]["ok"] is True and ready["degraded"] == []


def test_knowledge_base_locked_by_another_process(api_server, holder):
    server = _kb_server(api_server, holder)
    _assert_degraded_but_serving(server, "locked")
    assert "another process has it open" in server.log_text()


def test_knowledge_base_is_a_plain_file(api_server, tmp_path):
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    (data_dir / "kb.db").write_bytes(b"\x00not milvus" * 100)
    _assert_degraded_but_serving(_kb_server(api_server, data_dir))


def test_knowledge_base_missing_with_nothing_to_build_it_from(api_server, tmp_path):
    data_dir = tmp_path / "data"
    server = _kb_server(api_server, data_dir, KB_DIR=str(tmp_path / "no-documents"))
    _assert_degraded_but_serving(server)
    assert not (data_dir / "kb.db").exists() or not any((data_dir / "kb.db").rglob("*.json"))


def test_knowledge_base_deleted_while_serving(api_server, tmp_path):
    """``kb.db`` removed under a running server: the open database keeps answering
    (Milvus Lite holds it in the process), and the next start builds it again."""
    import shutil

    data_dir = tmp_path / "data"
    server = _kb_server(api_server, data_dir)
    headers = server.token()
    assert "来源：《" in server.chat(headers, QUESTION).json()["reply"]
    shutil.rmtree(data_dir / "kb.db")
    res = server.chat(headers, QUESTION)
    assert res.status_code == 200 and "来源：《" in res.json()["reply"]
    assert server.get("/readyz").json()["degraded"] == []
    for message, state in TRANSFER:
        assert server.chat(headers, message).json()["state"] == state
    stop(server.process)

    again = _kb_server(api_server, data_dir)
    assert "来源：《" in again.chat(again.token(), QUESTION).json()["reply"]
    assert (data_dir / "kb.db").is_dir()
    assert demo_counts(data_dir, "social_transfer") == {"applications": 1, "calls": 1}
