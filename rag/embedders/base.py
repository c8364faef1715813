"""The ``Embedder`` protocol: texts in, one L2-normalised row per text out."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
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
    import numpy as np

    vectors = np.asarray(vectors, dtype=np.float32)
    if vectors.ndim == 1:
        vectors = vectors[None, :]
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.where(norms == 0, 1.0, norms)


class LazyModel:
    """Loads its model on first use, once, thread-safely; ``_create`` builds it.

    ``_INSTALL`` is the hint raised (as ImportError) when the model's package
    is missing.
    """

    _INSTALL = "a package for this embedder is missing"

    def __init__(self) -> None:
        self._model: Any = None
        self._lock = threading.Lock()

    def _create(self) -> Any:
        raise NotImplementedError

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                try:
                    self._model = self._create()
                except ImportError as exc:
                    raise ImportError(self._INSTALL) from exc
        return self._model
