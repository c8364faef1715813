"""The turn object: what every front end (CLI, API, replay) gets back."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, Field

from si_agent import replies
from si_agent.config.model import Business, Step
from si_agent.core import consult
from si_agent.core.display import display
from si_agent.core.state import IN_DIALOGUE, FieldStatus, State
from si_agent.session.model import Session, Usage


class FieldView(BaseModel):
    key: str
    label: str
    value: str | None
    status: str
    error: str | None = None  # why an invalid or failed field is asked again
    group: str | None = None  # a consultation's slot: the label of its theme


class ThemeView(BaseModel):
    """The theme a consultation asks about now."""

    id: str
    label: str


class BusinessRef(BaseModel):
    id: str
    name: str


class Suggestion(BaseModel):
    business_id: str
    name: str
    text: str


class StepView(BaseModel):
    """The step waiting for a photo: what to ask and which camera a phone opens."""

    id: str
    label: str
    prompt: str
    capture: str
    optional: bool = False  # may be skipped: the dialogue goes on without it


StepStatus = Literal["done", "current", "failed", "pending", "optional", "skipped"]


class StepStatusView(BaseModel):
    """One photo step of the business and where it stands, for the page's list.

    ``status``: ``done`` (passed), ``current`` (its photo is awaited), ``failed``
    (awaited again after a photo that did not pass), ``pending`` (comes later),
    ``optional`` (may be uploaded any time, or skipped), ``skipped`` (declined).
    """

    id: str
    label: str
    status: StepStatus
    optional: bool = False


class PhotoOutcome(BaseModel):
    """What became of the photo uploaded in this turn: it passed its step, or not and why."""

    step: str
    passed: bool
    error: str | None = None  # the Chinese reason, as in the reply


class SuspendedView(BaseModel):
    """A business put aside for another one, resumable with "继续办理"."""

    business_id: str
    name: str
    filled: int  # fields already collected


class JobView(BaseModel):
    """Where a submission stands (no values: they hold personal data)."""

    id: str
    status: str
    progress: str | None = None
    attempts: int = 0


def job_view(job: Any) -> JobView | None:
    if job is None:
        return None
    return JobView(id=job.id, status=job.status, progress=job.progress, attempts=job.attempts)


class HandoffView(BaseModel):
    """The session's open hand-off ticket (``si_agent.handoff``): the page follows it on
    ``GET /api/session/handoff/events`` while it is open."""

    number: str
    state: str  # waiting, held or closed
    staff: str | None = None  # who answers (held)
    seq: int = 0  # the ticket message this turn added (the citizen's), 0 if none


class TurnResult(BaseModel):
    """The observable outcome of a turn; personal data in ``fields`` is masked."""

    reply: str = ""
    state: str
    business: BusinessRef | None = None
    fields: list[FieldView] = Field(default_factory=list)
    awaiting: str | None = None
    suggestion: Suggestion | None = None
    result: dict[str, Any] | None = None
    turn: int = 0
    usage: dict[str, Usage] = Field(default_factory=dict)
    job: JobView | None = None
    notice: str | None = None  # an outcome that arrived since the last turn
    suspended: list[SuspendedView] = Field(default_factory=list)  # newest last
    step: StepView | None = None  # the step awaiting an upload (POST /api/upload)
    steps: list[StepStatusView] = Field(default_factory=list)  # the business's photo steps
    photo: PhotoOutcome | None = None  # an upload turn: did the photo pass its step?
    theme: ThemeView | None = None  # a consultation's current theme
    services: list[BusinessRef] = Field(default_factory=list)  # listed in this reply (buttons)
    # The awaited choice field's options: quick replies (the page sends the one tapped).
    choices: list[str] = Field(default_factory=list)
    # The citizen's message as the page shows it and a reloaded page shows it again
    # (personal numbers masked); None outside a turn.
    message: str | None = None
    handoff: HandoffView | None = None  # the session's open hand-off ticket


def awaited_step(session: Session, business: Business | None) -> Step | None:
    """The step an upload goes to, or None.

    While executing steps: the first one not done that is required, or that was
    asked for again (``awaiting``). While collecting or confirming: the first
    optional step not done, which the citizen may upload for at any time.
    """
    if business is None:
        return None
    open_steps = [st for st in business.steps
                  if st.id not in session.step_data and st.id not in session.skipped]
    if session.state == State.STEP_EXECUTING:
        return next((st for st in open_steps
                     if not st.optional or st.id == session.awaiting), None)
    if session.state in IN_DIALOGUE:
        return next((st for st in open_steps if st.optional), None)
    return None


def _step_view(session: Session, business: Business | None) -> StepView | None:
    step = awaited_step(session, business)
    if step is None:
        return None
    return StepView(id=step.id, label=step.label, prompt=step.prompt, capture=step.capture,
                    optional=step.optional)


def step_views(session: Session, business: Business | None) -> list[StepStatusView]:
    """Every step of the business with its status (see ``StepStatusView``)."""
    if business is None or session.state == State.IDLE:
        return []
    awaited = awaited_step(session, business)
    views = []
    for st in business.steps:
        status: StepStatus
        if st.id in session.step_data:
            status = "done"
        elif st.id in session.skipped:
            status = "skipped"
        elif awaited is not None and st.id == awaited.id and (
                session.state == State.STEP_EXECUTING):
            status = "failed" if session.step_attempts else "current"
        else:
            status = "optional" if st.optional else "pending"
        views.append(StepStatusView(id=st.id, label=st.label, status=status,
                                    optional=st.optional))
    return views


def choices(session: Session, business: Business | None) -> list[str]:
    """The answers the reply asks for: to "确定要重新开始吗？", or the options of the enum
    field awaited while collecting (a consultation's several-choice slots excepted: one
    tap cannot say several)."""
    if session.start_over_asked:
        return list(replies.START_OVER_CHOICES)
    key = session.awaiting
    if business is None or session.state != State.COLLECTING or key not in business.field_keys:
        return []
    field = business.field(key)
    return [o.value for o in field.options] if field.type == "enum" else []


def _theme_view(session: Session, business: Business | None) -> ThemeView | None:
    if business is None or not business.is_consult or session.state != State.COLLECTING:
        return None
    theme = consult.current_theme(business, session.fields)
    return ThemeView(id=theme.id, label=theme.label) if theme else None


def field_views(session: Session, business: Business | None) -> list[FieldView]:
    if business is None:
        return []
    labels = {t.id: t.label for t in business.themes}
    views = []
    for f in business.fields:
        st = session.fields.get(f.key)
        value = None if st is None or st.value is None else (
            consult.shown(f, st.value) if f.group else display(f.type, st.value))
        status = st.status if st else FieldStatus.PENDING
        views.append(FieldView(key=f.key, label=f.label, value=value, status=status,
                               error=st.error if st and status in (FieldStatus.INVALID, FieldStatus.FAILED) else None,
                               group=labels.get(f.group) if f.group else None))
    return views


def snapshot(
    session: Session, catalog: Mapping[str, Business], reply: str = "",
    turn_usage: Usage | None = None, job: Any = None, services: Sequence[str] | None = None,
    photo: tuple[str, bool, str | None] | None = None,
) -> TurnResult:
    """The turn object for ``session`` as it is now; ``usage`` counts model calls;
    ``services`` are the businesses the reply listed (the page shows them as buttons),
    by default those the session's last reply listed (``Session.listed``)."""
    services = session.listed if services is None else services
    business = catalog.get(session.business_id) if session.business_id else None
    suggestion = None
    if session.suggestion and session.suggestion in catalog:
        target = catalog[session.suggestion]
        suggestion = Suggestion(
            business_id=target.id, name=target.name,
            text=replies.render(replies.SUGGEST, name=target.name),
        )
    return TurnResult(
        reply=reply,
        state=session.state,
        business=BusinessRef(id=business.id, name=business.name) if business else None,
        fields=field_views(session, business),
        awaiting=session.awaiting,
        suggestion=suggestion,
        result=session.result,
        turn=session.turn,
        usage={"turn": turn_usage or Usage(), "session": session.usage},
        job=job_view(job),
        notice=session.notice,
        step=_step_view(session, business),
        steps=step_views(session, business),
        photo=PhotoOutcome(step=photo[0], passed=photo[1], error=photo[2]) if photo else None,
        theme=_theme_view(session, business),
        suspended=[SuspendedView(business_id=f.business_id, name=catalog[f.business_id].name,
                                 filled=f.filled)
                   # (an empty cancelled one is no button: "继续" alone takes it up)
                   for f in session.suspended if f.business_id in catalog and f.worth_offering],
        services=[BusinessRef(id=b, name=catalog[b].name) for b in services if b in catalog],
        choices=choices(session, business),
    )
