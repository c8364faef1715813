"""OpenAI Function-Calling toolsets, one per state, built from the config.

====================  ==========================================================
state                 tools
====================  ==========================================================
idle, done            match_business, cancel_flow, answer_question
collecting            provide_field, modify_info, cancel_flow, answer_question
step_executing        upload_<step id> (the current step), cancel_flow, answer_question
confirming            confirm_submit, cancel_flow, modify_info, answer_question
failed                retry_submit, modify_info, cancel_flow, answer_question
executing             cancel_flow
====================  ==========================================================

``answer_question`` is offered in every waiting state because a citizen may ask
a question at any point; the answer never changes the collected data.
``cancel_flow`` is offered everywhere ("cancel works from any state"; in idle it
just says there is nothing to cancel), and ``modify_info`` while collecting lets
a citizen go back to a field already given ("修改离职日期").
"""

from __future__ import annotations

from collections.abc import Mapping

from si_agent.config.model import Business, Step

MATCH_BUSINESS = "match_business"
ANSWER_QUESTION = "answer_question"
PROVIDE_FIELD = "provide_field"
CANCEL_FLOW = "cancel_flow"
CONFIRM_SUBMIT = "confirm_submit"
MODIFY_INFO = "modify_info"
RETRY_SUBMIT = "retry_submit"
STEP_PREFIX = "upload_"


def _tool(name: str, description: str, properties: dict, required: list[str]) -> dict:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {
                "type": "object",
                "properties": properties,
                "required": required,
                "additionalProperties": False,
            },
        },
    }


def step_tool_name(step: Step) -> str:
    return STEP_PREFIX + step.id


def match_business_tool(catalog: Mapping[str, Business]) -> dict:
    ids = list(catalog)
    described = "; ".join(f"{b.id}: {b.name}" for b in catalog.values())
    return _tool(
        MATCH_BUSINESS,
        f"Start the business the user wants to query or handle. Businesses: {described}.",
        {"business_id": {"type": "string", "enum": ids}},
        ["business_id"],
    )


def answer_question_tool(catalog: Mapping[str, Business]) -> dict:
    return _tool(
        ANSWER_QUESTION,
        "Answer a knowledge question about social insurance policy; optionally recommend "
        "the business the question hints at.",
        {
            "question": {"type": "string"},
            "suggested_business_id": {"type": ["string", "null"], "enum": [*catalog, None]},
        },
        ["question"],
    )


def provide_field_tool(business: Business) -> dict:
    props = {
        f.key: {"type": "string", "description": f"{f.label} ({f.type})"} for f in business.fields
    }
    return _tool(
        PROVIDE_FIELD,
        f"Give values the user stated for the business {business.name}; several at once.",
        {"values": {"type": "object", "properties": props, "additionalProperties": False}},
        ["values"],
    )


def modify_info_tool(business: Business) -> dict:
    return _tool(
        MODIFY_INFO,
        "Change one collected field before submitting; value is optional.",
        {
            "field_key": {"type": "string", "enum": list(business.field_keys)},
            "value": {"type": ["string", "null"]},
        },
        ["field_key"],
    )


def _plain(name: str, description: str) -> dict:
    return _tool(name, description, {}, [])


def step_tool(step: Step) -> dict:
    return _tool(
        step_tool_name(step),
        f"Submit the user's upload for the step {step.label}.",
        {"file": {"type": "string", "description": "path or reference of the uploaded file"}},
        ["file"],
    )


def toolset(
    state: str,
    business: Business | None,
    step: Step | None,
    catalog: Mapping[str, Business],
) -> list[dict]:
    """The tools offered in ``state`` for ``business`` (and its current ``step``)."""
    answer = answer_question_tool(catalog)
    cancel = _plain(CANCEL_FLOW, "Cancel the business in progress.")
    if state in ("idle", "done") or business is None:
        return [match_business_tool(catalog), cancel, answer]
    if state == "collecting":
        return [provide_field_tool(business), modify_info_tool(business), cancel, answer]
    if state == "step_executing":
        tools = [step_tool(step)] if step is not None else []
        return [*tools, cancel, answer]
    if state == "confirming":
        confirm = _plain(CONFIRM_SUBMIT, "The user confirmed the summary: submit.")
        return [confirm, cancel, modify_info_tool(business), answer]
    if state == "failed":
        retry = _plain(RETRY_SUBMIT, "Submit the same data again after a failure.")
        return [retry, modify_info_tool(business), cancel, answer]
    return [cancel]


def tool_names(tools: list[dict]) -> set[str]:
    return {t["function"]["name"] for t in tools}
