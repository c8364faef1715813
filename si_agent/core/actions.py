"""The action table: every tool the engine may call, declared once.

Each action has a name, a pydantic argument model (exported as the tool's JSON
Schema and used to validate every call), the machine triggers it may fire, and
nothing else: the flow's handler table (``flow.handlers.HANDLERS``) maps each action
name to the function that applies it, checked at import. The toolset of a state
is *derived*: an
action is offered where the machine accepts one of its triggers (or in the
states listed in ``also_in`` for actions that fire none), and where the
business in progress can use it (``needs``)::

    action           triggers                    also offered in      needs
    ---------------  --------------------------  -------------------  --------------------
    match_business   begin                       -                    -
    provide_field    fields_done                 step_executing       business has fields
    confirm_submit   confirm                     -                    -
    retry_submit     retry                       -                    a retryable failure
    modify_info      modify, fix                 -                    business has fields
    redo_step        redo                        -                    business has steps
    upload_<step>    steps_done                  -                    a step is awaited
    skip_step        steps_done                  collecting,          an optional step is
                                                 confirming           offered
    skip_field       fields_done                 -                    a consultation
    explain_field    -                           collecting,          business has fields
                                                 confirming
    switch_business  suspend                     -                    -
    cancel_flow      cancel                      -                    -
    answer_question  -                           every state          -
    small_talk       -                           every state          -

which gives (``tests/flow/test_actions.py`` checks it against this table)::

    idle, done       match_business, cancel_flow, answer_question, small_talk
    collecting       provide_field, modify_info, [redo_step], [skip_step], [skip_field], [explain_field], switch_business, cancel_flow, answer_question, small_talk
    step_executing   [provide_field], upload_<step>, [skip_step], switch_business, cancel_flow, answer_question, small_talk
    confirming       confirm_submit, modify_info, [redo_step], [skip_step], [explain_field], switch_business, cancel_flow, answer_question, small_talk
    executing        cancel_flow, answer_question, small_talk
    failed           [retry_submit], modify_info, [redo_step], cancel_flow, answer_question, small_talk

Applying a call returns a ``CallOutcome``: applied, or rejected with a reason code.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from si_agent.config.model import Business, Step
from si_agent.core.machine import STATES, triggers_from
from si_agent.core.state import AT_REST, IN_DIALOGUE, State

MATCH_BUSINESS = "match_business"
SWITCH_BUSINESS = "switch_business"
EXPLAIN_FIELD = "explain_field"
SMALL_TALK = "small_talk"
ANSWER_QUESTION = "answer_question"
PROVIDE_FIELD = "provide_field"
CANCEL_FLOW = "cancel_flow"
CONFIRM_SUBMIT = "confirm_submit"
MODIFY_INFO = "modify_info"
REDO_STEP = "redo_step"
SKIP_STEP = "skip_step"
SKIP_FIELD = "skip_field"
RETRY_SUBMIT = "retry_submit"
UPLOAD = "upload"
STEP_PREFIX = "upload_"


# -- argument models -------------------------------------------------------------


class Args(BaseModel):
    model_config = ConfigDict(extra="forbid")


class NoArgs(Args):
    pass


class MatchBusinessArgs(Args):
    business_id: str


class SwitchBusinessArgs(Args):
    business_id: str


class ExplainFieldArgs(Args):
    field_key: str
    topic: Literal["why", "help"] = Field(
        description="why: the user hesitates or refuses to give the field; "
                    "help: the user asks what the field's term means")


SmallTalkKind = Literal["greeting", "closing", "handoff", "self_intro", "services",
                        "nothing_pending", "start_over"]


class SmallTalkArgs(Args):
    kind: SmallTalkKind = Field(
        description="greeting: hello; closing: thanks, ok, bye, that's all; handoff: asks "
                    "for a person or to complain; self_intro: asks who the assistant is; services: "
                    "asks which services can be done here (有哪些业务, 你们能干啥, 业务菜单); "
                    "nothing_pending: 办理 / 确认 / 继续 alone while nothing is in progress or "
                    "suggested (which business is meant); start_over: 重新开始 / 从头开始 (asked "
                    "first when a business is in progress), or yes to that question")


class AnswerQuestionArgs(Args):
    question: str = ""
    suggested_business_id: str | None = None


class ProvideFieldArgs(Args):
    values: dict[str, str] = Field(min_length=1)


class ModifyInfoArgs(Args):
    field_key: str
    value: str | None = None


class SkipFieldArgs(Args):
    field_keys: list[str] = Field(min_length=1)


class RedoStepArgs(Args):
    step_id: str


class UploadArgs(Args):
    file: str = Field(min_length=1, description="path or reference of the uploaded file")


# -- outcomes --------------------------------------------------------------------


class Reason(str, Enum):
    """Why a call was applied the way it was, or rejected."""

    OK = "ok"
    NOT_OFFERED = "not_offered"
    BAD_ARGUMENTS = "bad_arguments"
    UNKNOWN_BUSINESS = "unknown_business"
    UNAVAILABLE_BUSINESS = "unavailable_business"
    UNKNOWN_FIELD = "unknown_field"
    UNKNOWN_STEP = "unknown_step"
    NOT_ALLOWED = "not_allowed"
    NOT_RETRYABLE = "not_retryable"
    NOTHING_TO_CANCEL = "nothing_to_cancel"
    AWAITING_VALUE = "awaiting_value"
    STEP_FAILED = "step_failed"
    STEP_UNAVAILABLE = "step_unavailable"
    JOB_IN_PROGRESS = "job_in_progress"


class CallOutcome(BaseModel):
    """The result of applying one call: data, not a sentence to parse."""

    status: Literal["applied", "rejected"]
    reason: Reason = Reason.OK
    detail: str = ""

    @property
    def applied(self) -> bool:
        return self.status == "applied"

    def __str__(self) -> str:
        return f"{self.status}: {self.detail}" if self.detail else self.status


def applied(reason: Reason = Reason.OK, detail: str = "") -> CallOutcome:
    return CallOutcome(status="applied", reason=reason, detail=detail)


def rejected(reason: Reason, detail: str) -> CallOutcome:
    return CallOutcome(status="rejected", reason=reason, detail=detail)


# -- the table -------------------------------------------------------------------


@dataclass(frozen=True)
class Offer:
    """What decides the toolset besides the state: the business, step and last failure."""

    state: str
    business: Business | None
    step: Step | None
    retryable: bool = True


@dataclass(frozen=True)
class Action:
    name: str
    description: str
    args: type[Args]
    triggers: tuple[str, ...] = ()
    also_in: Collection[str] = ()
    needs: Callable[[Offer], bool] | None = None

    def offered(self, offer: Offer) -> bool:
        by_state = bool(set(self.triggers) & triggers_from(offer.state)) or (
            offer.state in self.also_in)
        return by_state and (self.needs is None or self.needs(offer))

    def tool_name(self, offer: Offer) -> str:
        if self.name == UPLOAD and offer.step is not None:
            return step_tool_name(offer.step)
        return self.name


def _has_fields(o: Offer) -> bool:
    return o.business is not None and bool(o.business.fields)


def _consults(o: Offer) -> bool:
    return o.business is not None and o.business.is_consult


def _has_steps(o: Offer) -> bool:
    return o.business is not None and bool(o.business.steps)


ACTIONS: tuple[Action, ...] = (
    Action(MATCH_BUSINESS, "Start the business the user wants to query or handle.",
           MatchBusinessArgs, triggers=("begin",)),
    Action(PROVIDE_FIELD, "Give values the user stated for the business; several at once.",
           ProvideFieldArgs, triggers=("fields_done",),
           also_in=(State.STEP_EXECUTING,), needs=_has_fields),
    Action(CONFIRM_SUBMIT, "The user confirmed the summary: submit.",
           NoArgs, triggers=("confirm",)),
    Action(RETRY_SUBMIT, "Submit the same data again after a failure.",
           NoArgs, triggers=("retry",), needs=lambda o: o.retryable),
    Action(MODIFY_INFO, "Change one collected field before submitting; value is optional.",
           ModifyInfoArgs, triggers=("modify", "fix"), needs=_has_fields),
    Action(REDO_STEP, "Do one step of the business again (e.g. upload a new photo).",
           RedoStepArgs, triggers=("redo",), needs=_has_steps),
    Action(UPLOAD, "Submit the user's upload for the current step.",
           UploadArgs, triggers=("steps_done",),
           needs=lambda o: o.step is not None),
    Action(SKIP_STEP, "The user does not want to do the optional step offered (e.g. no photo "
           "of their own): go on without it.",
           NoArgs, triggers=("steps_done",), also_in=IN_DIALOGUE,
           needs=lambda o: o.step is not None and o.step.optional),
    Action(SKIP_FIELD, "The user does not know or does not want to give these values "
           "(不清楚 / 先空着 / 不想说): they are not asked again.",
           SkipFieldArgs, triggers=("fields_done",), needs=_consults),
    Action(EXPLAIN_FIELD,
           "Explain a field instead of storing a value: why it is needed (the user "
           "hesitates or refuses: never store a refusal) or what its term means; the field "
           "is asked again.",
           ExplainFieldArgs, also_in=IN_DIALOGUE,
           needs=_has_fields),
    Action(SWITCH_BUSINESS,
           "The user clearly wants another business now, or said yes when asked whether to "
           "switch: put the business in progress aside (kept with its values, resumed "
           "later) and start the other one.",
           SwitchBusinessArgs, triggers=("suspend",)),
    Action(CANCEL_FLOW, "Cancel the business in progress.",
           NoArgs, triggers=("cancel",)),
    Action(ANSWER_QUESTION,
           "Answer a knowledge question about social insurance policy; optionally recommend "
           "the business the question hints at.",
           AnswerQuestionArgs, also_in=STATES),
    Action(SMALL_TALK, "Reply to small talk with the assistant's own text.",
           SmallTalkArgs, also_in=STATES),
)
BY_NAME: dict[str, Action] = {a.name: a for a in ACTIONS}


def step_tool_name(step: Step) -> str:
    return STEP_PREFIX + step.id


def action_for(tool_name: str) -> Action | None:
    """The action behind a tool name (``upload_<step id>`` is the upload action)."""
    if tool_name.startswith(STEP_PREFIX):
        return BY_NAME[UPLOAD]
    return BY_NAME.get(tool_name)


def offered_actions(offer: Offer) -> list[Action]:
    return [a for a in ACTIONS if a.offered(offer)]


class BadArguments(ValueError):
    """A call's arguments do not fit its action's model; ``problem`` says what is wrong
    (short English, for the decision record)."""

    def __init__(self, problem: str) -> None:
        super().__init__(problem)
        self.problem = problem


def parse_arguments(action: Action, arguments: Mapping[str, Any]) -> Args:
    """The validated arguments; raises ``BadArguments``."""
    try:
        return action.args.model_validate(dict(arguments))
    except ValidationError as exc:
        first = exc.errors(include_input=False, include_url=False)[0]
        where = ".".join(str(p) for p in first["loc"]) or "arguments"
        raise BadArguments(f"{where}: {first['msg']}") from None


# -- JSON Schemas for function calling ---------------------------------------------


def _strip_titles(schema: Any) -> Any:
    if isinstance(schema, dict):
        return {k: _strip_titles(v) for k, v in schema.items() if k != "title"}
    if isinstance(schema, list):
        return [_strip_titles(v) for v in schema]
    return schema


_BASE_SCHEMAS = {a.name: _strip_titles(a.args.model_json_schema()) for a in ACTIONS}


def tool_schema(action: Action, offer: Offer, catalog: Mapping[str, Business]) -> dict:
    """The OpenAI function tool for ``action``: its argument model's schema, with the
    enums of this catalog, business and step filled in."""
    params = {**_BASE_SCHEMAS[action.name], "additionalProperties": False}
    params.setdefault("properties", {})
    params.setdefault("required", [])
    props = dict(params["properties"])
    b = offer.business
    description = action.description
    if action.name == MATCH_BUSINESS:
        props["business_id"] = {"type": "string", "enum": list(catalog)}
        described = "; ".join(f"{x.id}: {x.name}" for x in catalog.values())
        description = f"{description} Businesses: {described}."
    elif action.name == SWITCH_BUSINESS:
        props["business_id"] = {"type": "string",
                                "enum": [x for x in catalog if b is None or x != b.id]}
    elif action.name == ANSWER_QUESTION:
        props["suggested_business_id"] = {"type": ["string", "null"], "enum": [*catalog, None]}
    elif action.name == PROVIDE_FIELD and b is not None:
        themes = {t.id: t.label for t in b.themes}
        fields = {f.key: {"type": "string", "description": (
                      f"{themes[f.group]}·{f.label} ({f.type})" if f.group else
                      f"{f.label} ({f.type})")}
                  for f in b.fields}
        props["values"] = {"type": "object", "properties": fields, "minProperties": 1,
                           "additionalProperties": False}
        description = f"Give values the user stated for the business {b.name}; several at once."
    elif action.name == SKIP_FIELD and b is not None:
        props["field_keys"] = {"type": "array", "minItems": 1,
                               "items": {"type": "string", "enum": list(b.field_keys)}}
    elif action.name == EXPLAIN_FIELD and b is not None:
        props["field_key"] = {"type": "string", "enum": list(b.field_keys)}
    elif action.name == MODIFY_INFO and b is not None:
        props["field_key"] = {"type": "string", "enum": list(b.field_keys)}
        props["value"] = {"type": ["string", "null"]}
    elif action.name == REDO_STEP and b is not None:
        props["step_id"] = {"type": "string", "enum": [s.id for s in b.steps],
                            "description": "; ".join(f"{s.id}: {s.label}" for s in b.steps)}
    elif action.name == UPLOAD and offer.step is not None:
        description = f"Submit the user's upload for the step {offer.step.label}."
    params["properties"] = props
    return {"type": "function", "function": {
        "name": action.tool_name(offer), "description": description, "parameters": params}}


def toolset(
    state: str,
    business: Business | None,
    step: Step | None,
    catalog: Mapping[str, Business],
    *,
    retryable: bool = True,
) -> list[dict]:
    """The tools offered in ``state`` for ``business`` (and its current ``step``)."""
    offer = Offer(state, business if state not in AT_REST else None, step, retryable)
    return [tool_schema(a, offer, catalog) for a in offered_actions(offer)]


def is_tool(name: str) -> bool:
    """Whether ``name`` is a tool of some state (not one a model made up)."""
    return name in _BASE_SCHEMAS or name.startswith(STEP_PREFIX)


def tool_names(tools: list[dict]) -> set[str]:
    return {t["function"]["name"] for t in tools}
