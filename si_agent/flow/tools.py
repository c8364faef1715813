"""Function-Calling toolsets: kept as the import path engines use; see ``flow.actions``."""

from si_agent.flow.actions import (  # noqa: F401
    ANSWER_QUESTION,
    CANCEL_FLOW,
    CONFIRM_SUBMIT,
    MATCH_BUSINESS,
    MODIFY_INFO,
    PROVIDE_FIELD,
    REDO_STEP,
    RETRY_SUBMIT,
    STEP_PREFIX,
    step_tool_name,
    tool_names,
    toolset,
)
