"""The exceptions the knowledge base raises, under si_agent's root.

    SiAgentError
    ├── DefinitionError
    │   └── DocumentError (ValueError)       a knowledge document is malformed: file:line: message
    ├── UnknownBackendError (LookupError)    an embedder name that does not exist (si_agent's own)
    └── RuntimeFlowError
        └── KnowledgeUnavailable             the vector store cannot be opened, read or written

``KnowledgeUnavailable`` never reaches the dialogue: the knowledge channel
turns it into an apology and reports it through ``status()``.
"""

from __future__ import annotations

from si_agent.errors import DefinitionError, RuntimeFlowError


class DocumentError(DefinitionError, ValueError):
    """One knowledge document is malformed (front matter, title, tags)."""

    def __init__(self, file: str, line: int | None, message: str) -> None:
        self.file = file
        self.line = line
        self.message = message
        super().__init__(f"{file}:{line or 0}: {message}")


class KnowledgeUnavailable(RuntimeFlowError):
    """The knowledge store is missing, locked, corrupt or unreachable."""

    def __init__(self, location: str, reason: str) -> None:
        self.location = location
        self.reason = reason
        super().__init__(f"knowledge base at {location} is unavailable: {reason}")
