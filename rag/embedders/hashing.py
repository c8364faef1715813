"""A model-free embedder for tests and benchmarks: hashed character bigrams.

Deterministic and instant; it knows spelling, not meaning, so it is no
substitute for a real model in production.
"""

from __future__ import annotations

import unicodedata
import zlib
from collections.abc import Sequence
from typing import TYPE_CHECKING

from rag.embedders.base import normalise

if TYPE_CHECKING:
    import numpy as np


class HashingEmbedder:
    """Character unigrams and bigrams hashed into ``dim`` buckets, L2-normalised."""

    relevance_floor = 0.2

    def __init__(self, dim: int = 256) -> None:
        self._dim = int(dim)
        self.name = f"hashing:char-1-2gram-{self._dim}"
        self.calls: list[int] = []  # how many texts each call embedded (tests count them)

    @property
    def dim(self) -> int:
        return self._dim

    def embed(self, texts: Sequence[str], *, query: bool = False) -> np.ndarray:
        import numpy as np

        texts = list(texts)
        self.calls.append(len(texts))
        out = np.zeros((len(texts), self._dim), dtype=np.float32)
        for row, text in enumerate(texts):
            t = unicodedata.normalize("NFKC", text).lower()
            grams = [c for c in t if not c.isspace()] + [t[i:i + 2] for i in range(len(t) - 1)]
            for g in grams:
                out[row, zlib.crc32(g.encode("utf-8")) % self._dim] += 1.0
        return normalise(out)
