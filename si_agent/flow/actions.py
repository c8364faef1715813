"""Transitional: the action table moved to ``si_agent.core.actions``.

Kept only for ``si_agent.engine.rules``, which another branch (core-rules)
replaces by a package importing ``si_agent.core``; delete this module then.
"""

from si_agent.core.actions import *  # noqa: F403
from si_agent.core.actions import STEP_PREFIX, step_tool_name, tool_names  # noqa: F401
