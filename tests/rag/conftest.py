"""Fixtures for the knowledge-base tests.

``kb`` is the shipped corpus in a Milvus Lite directory with the default
embedder, built once per session (about 20 s) and shared; the small corpora
and the hashing embedder keep the ingest and failure tests fast.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from rag import build_knowledge
from rag.embedders.hashing import HashingEmbedder
from si_agent.config.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
KB_DIR = ROOT / "rag" / "knowledge"

SMALL_DOCS = {
    "transfer": """---
title: 社保转移小指南
businesses: [social_transfer]
as_of: 2025-06
source: 测试用文档。
---
# 社保转移小指南

换城市工作后，养老保险关系可以转移，缴费年限累计计算。

## 所需材料
本人身份证或社保卡。

## 办理时限
全流程一般不超过45个工作日。
""",
    "card": """---
title: 社保卡挂失小指南
businesses: [card_loss]
as_of: 2025-06
source: 测试用文档。
---
社保卡丢了要尽快挂失，可以拨打12333或在电子社保卡里挂失。
""",
    "five": """---
title: 五险一金小常识
businesses: []
as_of: 2025-06
source: 测试用文档。
---
五险是养老、医疗、失业、工伤和生育保险；一金是住房公积金。
""",
}


@pytest.fixture(scope="session")
def qa() -> dict:
    return yaml.safe_load((Path(__file__).parent / "qa.yaml").read_text(encoding="utf-8"))


@pytest.fixture(scope="session")
def kb_settings(tmp_path_factory) -> Settings:
    return Settings(data_dir=tmp_path_factory.mktemp("kb"), kb_dir=KB_DIR)


@pytest.fixture(scope="session")
def kb(kb_settings):
    """The real knowledge base, built on first use exactly as ``serve`` would."""
    knowledge = build_knowledge(kb_settings)
    status = knowledge.status()
    assert status["ok"], status
    return knowledge


@pytest.fixture
def small_corpus(tmp_path) -> Path:
    directory = tmp_path / "docs"
    directory.mkdir()
    for name, text in SMALL_DOCS.items():
        (directory / f"{name}.md").write_text(text, encoding="utf-8")
    return directory


@pytest.fixture
def hashing() -> HashingEmbedder:
    return HashingEmbedder()
