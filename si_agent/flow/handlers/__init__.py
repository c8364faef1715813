"""The handler table: one function per action of ``core.actions``, grouped by concern.

A handler takes the flow and the call's validated arguments and returns a
``CallOutcome``; the table is checked against the action table at import.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from si_agent.core import actions as A
from si_agent.flow.handlers import business, fields, slots, steps, submit, talk
from si_agent.flow.moves import Flow

Handler = Callable[[Flow, Any], A.CallOutcome]

HANDLERS: dict[str, Handler] = {
    A.MATCH_BUSINESS: business.match_business,
    A.SWITCH_BUSINESS: business.switch_business,
    A.CANCEL_FLOW: business.cancel_flow,
    A.PROVIDE_FIELD: fields.provide_field,
    A.MODIFY_INFO: fields.modify_info,
    A.EXPLAIN_FIELD: fields.explain_field,
    A.SKIP_FIELD: slots.skip_field,
    A.UPLOAD: steps.upload,
    A.REDO_STEP: steps.redo_step,
    A.SKIP_STEP: steps.skip_step,
    A.SMALL_TALK: talk.small_talk,
    A.ANSWER_QUESTION: talk.answer_question,
    A.CONFIRM_SUBMIT: submit.confirm_submit,
    A.RETRY_SUBMIT: submit.retry_submit,
}

if set(HANDLERS) != set(A.BY_NAME):  # pragma: no cover - a definition mistake, found at import
    raise ImportError("the handler table and core.actions differ: "
                      f"{sorted(set(HANDLERS) ^ set(A.BY_NAME))}")
