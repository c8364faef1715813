"""The libraries of the ``rag`` extra: which are missing, and how to install them.

They are imported only where used (the store, the embedders, ingest); this
module checks that they are installed without importing them, so a base
install (``pip install si_agent``) can tell the knowledge base is off.
"""

from __future__ import annotations

from collections.abc import Sequence
from importlib.util import find_spec

from rag.errors import MissingDependency

INSTALL = "pip install 'si_agent[rag]'"
# What every knowledge-base configuration needs; an embedder checks its own model package.
LIBRARIES = ("numpy", "pymilvus", "tqdm")


def missing(modules: Sequence[str] = LIBRARIES) -> list[str]:
    """The ``modules`` (top-level import names) that are not installed."""
    return [m for m in modules if find_spec(m) is None]


def require(modules: Sequence[str] = LIBRARIES, *, what: str = "the knowledge base") -> None:
    """Raise ``MissingDependency`` naming the extra when any of ``modules`` is missing."""
    absent = missing(modules)
    if absent:
        raise MissingDependency(
            absent, f"{what} needs {', '.join(absent)} from the rag extra: {INSTALL}")
