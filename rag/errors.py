"""The exceptions the knowledge base raises, under its own root (``rag`` never imports si_agent).

    RagError
    ├── DocumentError (ValueError)        a knowledge document is malformed: file:line: message
    │   └── TermsError                    the term table (_terms.yaml) is malformed
    ├── UnknownEmbedder (LookupError)     an embedder name that does not exist; lists the valid ones
    ├── MissingDependency (ImportError)   a library of the rag extra is not installed; says what to install
    └── KnowledgeUnavailable              the vector store cannot be opened, read or written

``KnowledgeUnavailable`` never reaches the dialogue: the knowledge channel
turns it into an apology and reports it through ``status()``. si_agent's
``create_knowledge`` turns ``MissingDependency`` into a disabled channel and
``UnknownEmbedder`` into its own ``UnknownBackendError``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence


class RagError(Exception):
    """Root of every exception the knowledge base raises."""


class DocumentError(RagError, ValueError):
    """One knowledge document is malformed (front matter, title, tags)."""

    def __init__(self, file: str, line: int | None, message: str) -> None:
        self.file = file
        self.line = line
        self.message = message
        super().__init__(f"{file}:{line or 0}: {message}")


class TermsError(DocumentError):
    """The term table (``_terms.yaml`` in the knowledge directory) is malformed."""


class UnknownEmbedder(RagError, LookupError):
    """``SI_EMBED_MODEL`` names no registered embedder and no model directory."""

    def __init__(self, name: str, valid: Iterable[str]) -> None:
        self.name = name
        self.valid = list(valid)
        super().__init__(f"unknown embedder {name!r}; valid names: {', '.join(self.valid)}")


class MissingDependency(RagError, ImportError):
    """Libraries the knowledge base needs are not installed (``pip install 'si_agent[rag]'``)."""

    def __init__(self, modules: Sequence[str], message: str) -> None:
        self.modules = list(modules)
        super().__init__(message)


class KnowledgeUnavailable(RagError):
    """The knowledge store is missing, locked, corrupt or unreachable."""

    state = "unavailable"  # as /readyz reports it

    def __init__(self, location: str, reason: str) -> None:
        self.location = location
        self.reason = reason
        super().__init__(f"knowledge base at {location} is unavailable: {reason}")


class KnowledgeLocked(KnowledgeUnavailable):
    """A Milvus Lite directory that another process (another server, a CLI) has open."""

    state = "locked"

    def __init__(self, location: str) -> None:
        super().__init__(location, "another process has it open (another si-agent server or "
                                   "command on the same SI_DATA_DIR?); give this process a "
                                   "data directory of its own (SI_DATA_DIR) or use a Milvus "
                                   "server (SI_MILVUS_URI)")
