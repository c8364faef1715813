"""Any local sentence-transformers model directory (``SI_EMBED_MODEL=/path/to/model``).

Nothing is downloaded: the path must hold the model already. Models that
define "query"/"passage" prompts (E5, BGE, …) get them.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from rag.embedders.base import LazyModel, normalise

if TYPE_CHECKING:
    import numpy as np

_INSTALL = (
    "SI_EMBED_MODEL points at a sentence-transformers model, which needs the "
    "'sentence-transformers' package: pip install sentence-transformers"
)


class SentenceTransformerEmbedder(LazyModel):
    """A local sentence-transformers model, loaded on first use."""

    _INSTALL = _INSTALL

    batch_size = 32

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.name = f"st:{self.path.resolve().name}"
        super().__init__()

    def _create(self):
        from sentence_transformers import SentenceTransformer

        return SentenceTransformer(str(self.path), local_files_only=True)

    @property
    def dim(self) -> int:
        return int(self._load().get_sentence_embedding_dimension())

    def embed(self, texts: Sequence[str], *, query: bool = False) -> np.ndarray:
        import numpy as np

        model = self._load()
        texts = list(texts)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        prompts = getattr(model, "prompts", None) or {}
        prompt_name = "query" if query else "passage"
        kwargs = {"prompt_name": prompt_name} if prompt_name in prompts else {}
        vectors = model.encode(texts, batch_size=self.batch_size, convert_to_numpy=True,
                               normalize_embeddings=True, **kwargs)
        return normalise(vectors)
