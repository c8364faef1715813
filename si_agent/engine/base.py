"""Transitional: the engine vocabulary moved to ``si_agent.core.decision``.

Kept only for ``si_agent.engine.rules``, which another branch (core-rules)
replaces by a package importing ``si_agent.core``; delete this module then.
"""

from si_agent.core.decision import (  # noqa: F401
    SURE,
    Decision,
    IntentEngine,
    Rule,
    SessionView,
    TextSink,
    ToolCall,
    pending_fields,
)
