"""A finished job's outcome applied to its flow: done with the result, or failed.

Shared by the turn that finds a finished job (``Turn.prepare``) and the job
driver that ran it (``flow.execution``).
"""

from __future__ import annotations

from si_agent import replies
from si_agent.config.model import Business
from si_agent.core.display import display
from si_agent.core.state import Awaiting, FieldStatus
from si_agent.flow.moves import Flow
from si_agent.jobs import Job, JobError
from si_agent.session.model import FieldState


def apply_job(t: Flow, job: Job) -> None:
    """Apply a finished job's outcome: done with the result, or failed."""
    b = t.business
    t.effects.applied = job
    if b is None:  # the business left the configuration while its job ran
        t.fire("cancel")
        t.clear()
        t.st.parts.append(replies.BUSINESS_GONE)
        t.st.asked = True
        return
    if job.status == "succeeded":
        t.fire("succeed")
        if t.s.step_files:  # the photos were for this submission only
            t.drop_files(t.owner())
            t.s.step_files = {}
        t.s.result = job.result or {}
        t.s.awaiting = None
        t.st.parts.append(outcome_text(t, job))
        t.st.asked = True
        t.offer_resume()
        return
    t.fire("fail")
    failed(t, b, job.error or JobError(message=replies.EXECUTOR_CRASHED))


def outcome_text(t: Flow, job: Job) -> str:
    """What the citizen is told about a finished job (changes nothing)."""
    b = t.business
    if b is None or b.api is None or job.status != "succeeded":
        return job.error.message if job.error else replies.EXECUTOR_CRASHED
    return result_text(t, b, job.result or {})


def result_text(t: Flow, b: Business, result: dict) -> str:
    """``b``'s result template filled with the values shown and the backend's result."""
    assert b.api is not None
    shown = {k: (display(b.field(k).type, v) if k in b.field_keys else v)
             for k, v in t.values().items()}
    return replies.render(b.api.result_template, {**shown, **result})


def failed(t: Flow, b: Business, error: JobError) -> None:
    s = t.s
    if error.resume is not None:
        s.resume = error.resume
    field_errors = {k: v for k, v in error.field_errors.items() if k in b.field_keys}
    step_errors = {k: v for k, v in error.field_errors.items()
                   if k in {st.id for st in b.steps}}
    s.retryable = error.retryable and not (field_errors or step_errors)
    if step_errors:
        step_id, message = next(iter(step_errors.items()))
        t.fire("redo")
        t.forget_step(step_id)
        s.awaiting = step_id
        step = next(st for st in b.steps if st.id == step_id)
        t.st.parts.append(replies.render(replies.EXEC_STEP_FAILED, label=step.label,
                                         message=_sentence(message)))
        if step.optional:
            t.st.parts.append(replies.STEP_OPTIONAL_HINT)
        return
    if field_errors:
        t.fire("fix")
        for key, message in field_errors.items():
            st = s.fields.setdefault(key, FieldState())
            st.status, st.error = FieldStatus.FAILED, message
        items = replies.FIELD_ERRORS_SEP.join(
            replies.render(replies.LABELLED, label=b.field(k).label, text=m.rstrip("。"))
            for k, m in field_errors.items())
        t.st.parts.append(replies.render(replies.EXEC_FIELD_FAILED, items=items))
        s.awaiting = next(iter(field_errors))
        return
    t.st.asked = True
    if error.unknown:
        s.awaiting = None
        t.st.parts.append(error.message)
    elif error.retryable:
        s.awaiting = Awaiting.RETRY
        template = replies.EXEC_FAILED if b.type == "handle" else replies.QUERY_FAILED
        t.st.parts.append(replies.render(template, message=error.message))
    else:
        s.awaiting = None
        t.st.parts.append(replies.render(replies.EXEC_REFUSED, message=error.message,
                                         handoff=t.deps.handoff_text))


def _sentence(text: str) -> str:
    text = text.strip()
    return text if text.endswith(("。", "！", "？", ".")) else text + "。"
