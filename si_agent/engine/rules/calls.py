"""The tool calls the rules make, and the filter that keeps them within the toolset.

Every rule returns a ``Ruled``: the calls, the ``Rule`` that fired, and a reason
for the log.
"""

from __future__ import annotations

from si_agent.core import actions as T
from si_agent.core.decision import Rule, ToolCall

Ruled = tuple[list[ToolCall], Rule, str]


def within_toolset(calls: list[ToolCall], offered: frozenset[str]) -> list[ToolCall]:
    """The calls the toolset allows. Values given with the request that starts a
    business ("从杭州转到苏州") follow ``match_business``: they belong to the
    business it starts, where the controller checks them again; so does a
    ``match_business`` after ``cancel_flow`` ("不办这个了，帮我查养老金"), and a
    ``confirm_submit`` after ``skip_step`` ("确认，不用照片")."""
    kept: list[ToolCall] = []
    for c in calls:
        after = {k.name for k in kept}
        if (c.name in offered or (T.MATCH_BUSINESS in after and c.name == T.PROVIDE_FIELD)
                or (T.CANCEL_FLOW in after and c.name == T.MATCH_BUSINESS)
                or (T.SKIP_STEP in after and c.name == T.CONFIRM_SUBMIT)):
            kept.append(c)
    return kept


def modify_call(key: str, value: str | None) -> ToolCall:
    """``modify_info`` for ``key``; without a value the field is asked again."""
    args: dict[str, str] = {"field_key": key}
    if value:
        args["value"] = value
    return ToolCall(name=T.MODIFY_INFO, arguments=args)


def cancel_call() -> ToolCall:
    return ToolCall(name=T.CANCEL_FLOW)


def switch_call(bid: str) -> ToolCall:
    return ToolCall(name=T.SWITCH_BUSINESS, arguments={"business_id": bid})


def explain_call(key: str, topic: str) -> ToolCall:
    return ToolCall(name=T.EXPLAIN_FIELD, arguments={"field_key": key, "topic": topic})


def small_talk_call(kind: str) -> ToolCall:
    return ToolCall(name=T.SMALL_TALK, arguments={"kind": kind})


def redo_call(step_id: str) -> ToolCall:
    return ToolCall(name=T.REDO_STEP, arguments={"step_id": step_id})


def match_call(bid: str) -> ToolCall:
    return ToolCall(name=T.MATCH_BUSINESS, arguments={"business_id": bid})


def answer_call(text: str, suggested: str | None) -> ToolCall:
    """``answer_question`` for ``text`` (empty: nothing to answer), with the business to
    suggest, if any."""
    return ToolCall(
        name=T.ANSWER_QUESTION,
        arguments={"question": text, "suggested_business_id": suggested},
    )
