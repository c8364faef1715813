"""The ``Embedder`` protocol: texts in, one L2-normalised row per text out."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np


class Embedder(Protocol):
    """Turns texts into dense vectors.

    ``name`` identifies the model (stored with every chunk, so a different
    model re-embeds the corpus); ``dim`` is the vector size. ``query=True``
    marks search queries, for models that embed queries and passages
    differently (E5's "query: " / "passage: " prefixes).
    """

    name: str

    @property
    def dim(self) -> int: ...

    def embed(self, texts: Sequence[str], *, query: bool = False) -> np.ndarray: ...


def normalise(vectors: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length (zero rows stay zero), as float32."""
    vectors = np.asarray(vectors, dtype=np.float32)
    if vectors.ndim == 1:
        vectors = vectors[None, :]
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.where(norms == 0, 1.0, norms)
