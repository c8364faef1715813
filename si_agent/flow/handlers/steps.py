"""Steps: an upload run by its step handler, a step done again or skipped."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from si_agent import replies
from si_agent.config.model import Business, Step
from si_agent.core import actions as A
from si_agent.core.display import recorded_items
from si_agent.core.state import IN_DIALOGUE, FieldStatus, State
from si_agent.flow import handoff
from si_agent.flow.moves import Flow
from si_agent.flow.steps import StepContext, StepResult, Upload
from si_agent.handoff import Reason
from si_agent.session.model import FieldState, Produced
from si_agent.validators import check as validate_value

log = logging.getLogger(__name__)


def redo_step(t: Flow, args: A.RedoStepArgs) -> A.CallOutcome:
    b = t.business
    assert b is not None
    step = next((st for st in b.steps if st.id == args.step_id), None)
    if step is None:
        return A.rejected(A.Reason.UNKNOWN_STEP, f"unknown step {args.step_id!r}")
    done = step.id in t.s.step_data
    t.fire("redo")
    t.forget_step(step.id)
    t.s.awaiting = step.id  # an optional step is awaited only when asked for
    if uploads_next(t, step):
        return A.applied(detail="upload follows")
    t.st.parts.append(replies.render(replies.STEP_REDO_ASK if done else replies.STEP_ASK,
                                     label=step.label))
    if step.optional:
        t.st.parts.append(replies.STEP_OPTIONAL_HINT)
    return A.applied()


def uploads_next(t: Flow, step: Step) -> bool:
    """Whether this decision uploads for ``step`` right after (no ask in between)."""
    calls = t.decision.calls if t.decision else []
    return any(c.name == A.step_tool_name(step) for c in calls)


def skip_step(t: Flow, args: A.NoArgs) -> A.CallOutcome:
    """Go on without the optional step offered (offered only for one)."""
    step = t.step
    assert step is not None and step.optional
    s = t.s
    s.skipped.append(step.id)
    t.st.parts.append(replies.render(replies.STEP_SKIPPED, label=step.label))
    if s.state == State.STEP_EXECUTING:
        s.awaiting = None
        if t.step is None:
            t.complete()
    return A.applied(detail=f"skipped {step.id}")


def upload(t: Flow, args: A.UploadArgs) -> A.CallOutcome:
    step, b = t.step, t.business
    assert step is not None and b is not None
    handler = t.deps.step_handlers.get(step.handler)
    if handler is None:
        t.st.parts.append(replies.render(replies.STEP_UNAVAILABLE, label=step.label))
        t.st.asked = True
        return A.applied(A.Reason.STEP_UNAVAILABLE, f"no handler {step.handler!r}")
    key = ("step", step.id, args.file)
    if key not in t.memo:
        context = StepContext(
            business=b,
            values=MappingProxyType({k: st.value for k, st in t.s.fields.items()
                                     if st.status == FieldStatus.COLLECTED}),
            step_data=MappingProxyType(dict(t.s.step_data)),
            file=lambda step_id, name: kept_file(t, step_id, name),
        )
        try:
            upload = t.uploads.get(args.file) or Upload(ref=args.file)
            t.memo[key] = handler.run(step, upload, context)
        except Exception as exc:  # a broken handler must not break the dialogue
            log.error("step %s of %s: handler %s crashed (%s)", step.id, b.id, step.handler,
                      type(exc).__name__)
            t.memo[key] = StepResult(error=replies.STEP_CRASHED)
    result: StepResult = t.memo[key]
    s = t.s
    error = result.error or bad_produced(t, b, step, result)
    if error is not None and result.redo in s.step_data and result.redo != step.id:
        # What this step needs from an earlier one is gone or unusable: that one again.
        earlier = next(st for st in b.steps if st.id == result.redo)
        t.forget_step(earlier.id)
        t.st.photo = (step.id, False, error)
        t.st.parts.append(replies.render(replies.STEP_FAILED, label=step.label, error=error))
        return A.applied(A.Reason.STEP_FAILED, f"step failed: {earlier.id} again")
    if error is not None:
        s.step_attempts += 1
        t.st.photo = (step.id, False, error)
        t.st.parts.append(replies.render(replies.STEP_FAILED, label=step.label,
                                         error=error or step.error_msg or ""))
        if step.optional:
            t.st.parts.append(replies.STEP_OPTIONAL_HINT)
            if t.state_before in IN_DIALOGUE:
                s.awaiting = None  # taken up in passing: the dialogue goes on
                t.complete()
            return A.applied(A.Reason.STEP_FAILED, "optional step failed")
        if s.step_attempts >= b.max_attempts:
            t.st.parts.append(replies.render(replies.ESCALATE, label=step.label,
                                             attempts=s.step_attempts, handoff=t.deps.handoff_text))
            t.st.parts.append(handoff.request(t, Reason.FAILURES))  # a ticket for a person
            s.step_attempts = 0
        return A.applied(A.Reason.STEP_FAILED, "step failed")
    s.step_data[step.id] = result.data
    s.step_attempts = 0
    t.st.photo = (step.id, True, None)
    for name, data in result.files.items():
        t.effects.put(t.owner(), f"{step.id}/{name}", data)
    s.step_files[step.id] = {name: name in result.submit for name in result.files}
    t.st.parts.append(replies.render(replies.STEP_DONE, label=step.label))
    take_produced(t, b, step, result.fields)
    if t.step is None:
        t.complete()
    return A.applied(detail="step done")


def kept_file(t: Flow, step_id: str, name: str) -> bytes | None:
    if name not in t.s.step_files.get(step_id, {}):
        return None
    return t.deps.files.get(t.owner(), f"{step_id}/{name}")


def bad_produced(t: Flow, b: Business, step: Step, result: StepResult) -> str | None:
    """Why a value the step read is unusable (it does not validate), or None."""
    for key, raw in result.fields.items():
        if key not in b.field_keys or (step.produces and key not in step.produces):
            log.warning("step %s of %s produced an undeclared field %r; ignored",
                        step.id, b.id, key)
            continue
        field = b.field(key)
        res = validate_value(field.type, str(raw), **field.validator_options())
        if not res.ok:
            return replies.render(replies.STEP_VALUE_UNREADABLE, label=field.label,
                                  error=res.error, instruction=step.error_msg or "")
    return None


def take_produced(t: Flow, b: Business, step: Step, fields: Mapping[str, Any]) -> None:
    """Fill fields from a step; a value the citizen typed that differs is an error."""
    s = t.s
    recorded = []
    for key, raw in fields.items():
        if key not in b.field_keys or (step.produces and key not in step.produces):
            continue
        field = b.field(key)
        value = validate_value(field.type, str(raw), **field.validator_options()).value
        s.produced[key] = Produced(value=value, step=step.id)
        st = s.fields.setdefault(key, FieldState())
        if st.status == FieldStatus.COLLECTED and st.value != value:
            st.value, st.status = None, FieldStatus.INVALID
            st.error = replies.render(replies.STEP_MISMATCH, step=step.label, label=field.label)
            t.st.parts.append(st.error)
            t.st.reasked.add(key)
            s.awaiting = key
        else:
            st.value, st.status, st.error, st.attempts = value, FieldStatus.COLLECTED, None, 0
            recorded.append(key)
    if recorded:
        items = recorded_items(b, recorded, s.fields)
        t.st.parts.append(replies.render(replies.RECORDED, items=items))
