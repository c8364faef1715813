"""A flow in progress on one loaded session, and the moves that change its state.

``Flow`` is what handlers (``flow.handlers``), outcome application
(``flow.outcomes``) and the closing prompt (``flow.closing``) work on: the
session, the turn's dependencies (``flow.deps``), a small ``TurnState`` (what
the reply is being made of) and the effects recorded for after the save
(``flow.effects``). Every state change goes through ``Flow.fire``, and what
entering a state entails is written once, here: ``complete`` (the fields or
steps are in: confirm, or queue the job on entering ``executing``), ``clear``
(no business), ``forget_step`` and ``offer_resume``. Nothing here does I/O
except reading a form's fields once per turn (``discovered``, memoised).
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from si_agent import replies
from si_agent.audit.model import AUDITED_STATES
from si_agent.config.model import Business, FieldDef, Step, Theme
from si_agent.core import actions as A
from si_agent.core import consult
from si_agent.core.decision import Decision, SessionView, ToolCall, pending_fields
from si_agent.core.machine import FlowModel
from si_agent.core.state import AT_REST, Awaiting, FieldStatus, State
from si_agent.errors import ExecutorError
from si_agent.flow.deps import TurnDeps
from si_agent.flow.effects import Effects, Entered, Moderated
from si_agent.flow.result import awaited_step
from si_agent.flow.steps import FILE_REF, Upload
from si_agent.jobs import Job
from si_agent.jobs.model import this_process
from si_agent.privacy import redact_arguments
from si_agent.session.model import Session, SuspendedFlow, ToolCallRecord

log = logging.getLogger(__name__)


def join(parts: list[str]) -> str:
    """Reply lines joined, empty ones left out."""
    return "\n".join(p for p in parts if p)


@dataclass
class TurnState:
    """What this turn's reply is being made of, and what it already said."""

    notices: list[str] = field(default_factory=list)  # outcomes since the last turn
    answers: list[str] = field(default_factory=list)  # knowledge answers come next
    parts: list[str] = field(default_factory=list)
    records: list[ToolCallRecord] = field(default_factory=list)
    asked: bool = False  # the next prompt was already put in the reply
    reasked: set[str] = field(default_factory=set)  # fields whose error line says what to enter
    pending_suggestion: str | None = None  # the suggestion the last reply made
    start_over_asked: bool = False  # the last reply asked whether to start over
    unreadable: set[str] = field(default_factory=set)  # businesses whose form could not be read
    # A consultation: the one this turn started in, the theme asked before this turn,
    # and what the turn did to its slots (the reply is made of these, by core.consult).
    consulting: Business | None = None
    theme_asked: Theme | None = None
    opened: bool = False  # the consultation's opening is in this reply
    consult_lines: list[str] = field(default_factory=list)
    received: list[str] = field(default_factory=list)  # slots taken, for the received line
    resumed: bool = False
    services: list[str] = field(default_factory=list)  # businesses listed (shown as buttons)
    # The photo this turn ran through its step: (step id, passed, why not); one a turn.
    photo: tuple[str, bool, str | None] | None = None


class Flow:
    """One loaded session's flow, its dependencies, the reply so far and the effects."""

    def __init__(self, session: Session, deps: TurnDeps, *, text: str = "",
                 memo: dict[tuple, Any] | None = None, spoken: bool = False) -> None:
        self.s = session
        self.deps = deps
        self.text = text
        self.spoken = spoken  # the text is a transcript of a spoken message (flow.readback)
        # Knowledge answers, step results and forms read, across re-runs of a decision.
        self.memo: dict[tuple, Any] = {} if memo is None else memo
        self.state_before = session.state
        self.decision: Decision | None = None
        self.st = TurnState()
        self.effects = Effects()
        self.uploads: dict[str, Upload] = {}  # photos sent with this turn, by reference

    @property
    def business(self) -> Business | None:
        bid = self.s.business_id
        b = self.deps.catalog.get(bid) if bid else None
        if b is not None and b.discover and not b.fields:
            b = self.discovered(b) or b  # after a restart: its fields, from the cache
        return b

    @property
    def step(self) -> Step | None:
        """The step an upload goes to (``awaited_step``)."""
        return awaited_step(self.s, self.business)

    def owner(self, nonce: str | None = None) -> str:
        """Whose files these are in the step-file store: a flow of this session."""
        return f"{self.s.session_id}:{nonce or self.s.flow_nonce}"

    def drop_files(self, owner: str, names: tuple[str, ...] | None = None) -> None:
        self.effects.drop(owner, names)

    def forget_flow(self, flow: SuspendedFlow) -> None:
        """A suspended flow is given up: its photos go too."""
        if flow.step_files:
            self.drop_files(self.owner(flow.flow_nonce))

    def offer(self) -> A.Offer:
        business = self.business if self.s.state not in AT_REST else None
        return A.Offer(self.s.state, business, self.step, self.s.retryable)

    def tools(self) -> list[dict]:
        o = self.offer()
        return self.deps.toolsets.toolset(o.state, o.business, o.step, o.retryable)

    def view(self) -> SessionView:
        s = self.s
        return SessionView(
            state=s.state, business=self.business,
            fields={k: v.model_copy() for k, v in s.fields.items()},
            awaiting=s.awaiting, suggestion=s.suggestion, step=self.step,
            history=tuple(s.history),  # messages are frozen: shared, not copied
            result=dict(s.result) if s.result else None, catalog=self.deps.catalog,
            suspended=tuple(f.business_id for f in s.suspended),
            start_over_asked=s.start_over_asked,
            suspended_awaiting={f.business_id: f.awaiting for f in s.suspended},
        )

    def fire(self, trigger: str) -> None:
        b = self.business
        s = self.s
        model = FlowModel(
            s.state, requires_confirm=bool(b and b.require_confirm),
            steps_pending=lambda: bool(b and any(st.id not in s.step_data and not st.optional
                                                 for st in b.steps)),
            fields_pending=lambda: bool(b and self.pending(b)),
            concludes=bool(b and b.is_consult),
        )
        self.deps.machine.fire(model, trigger)
        s.state = State(model.state)
        if s.state in AUDITED_STATES:
            self.effects.entered.append(Entered(s.state, b, self.values()))

    def record(self, call: ToolCall, outcome: A.CallOutcome) -> None:
        self.st.records.append(ToolCallRecord(
            name=call.name, arguments=redact_arguments(call.arguments, self.business),
            status=outcome.status, reason=outcome.reason.value, detail=outcome.detail,
        ))

    def moderated(self, reply: str) -> str:
        """The reply as the citizen may see it (``si_agent.moderation``, output check)."""
        verdict = self.deps.moderation.check(reply, "output")
        if verdict.clean:
            return reply
        self.effects.moderated.append(Moderated("output", verdict.action.value,
                                                verdict.categories, self.business))
        if verdict.refused:
            return replies.render(replies.OUTPUT_REFUSED, handoff=self.deps.handoff_text)
        return verdict.text

    def discovered(self, business: Business) -> Business | None:
        """The business with the fields its web form asks for (read once per turn)."""
        key = ("discover", business.id)
        if key not in self.memo:
            try:
                known = bool(self.deps.catalog[business.id].fields)
                self.memo[key] = self.deps.discoverer.discovered(business)
                self.memo[("read", business.id)] = not known  # its fields are new
            except ExecutorError as exc:
                log.warning("business %s: its form's fields cannot be read (%s)", business.id,
                            exc.message)
                self.memo[key] = None
        ready = self.memo[key]
        if ready is None and business.id not in self.st.unreadable:
            self.st.unreadable.add(business.id)  # said once in this reply
            self.st.parts.append(replies.render(replies.FORM_UNREADABLE, name=business.name))
        return ready

    def greeting(self) -> str:
        available = [b for b in self.deps.catalog.values() if b.id not in self.deps.unavailable]
        if not available:
            return replies.render(replies.NONE_ONLINE, handoff=self.deps.handoff_text)
        examples = replies.LIST_SEP.join(b.name for b in available[:3])
        if not self.st.services:  # every one offered, as buttons (the text names a few)
            self.st.services.extend(b.id for b in available)
        return replies.render(self.deps.texts.greeting, examples=examples)

    def services_reply(self, template: str) -> str:
        """``template`` with the services listed (``services``), or, when none can be
        done here now, where to go instead."""
        listed = self.services()
        if not listed:
            return replies.render(replies.NONE_ONLINE, handoff=self.deps.handoff_text)
        return replies.render(template, services=listed)

    def services(self) -> str:
        """The catalog's businesses that can be done now (not those missing a step
        handler here), one line per kind; they are kept for the turn object, in the
        order shown."""
        kinds: dict[str, list[Business]] = {}
        for b in self.deps.catalog.values():
            if b.id not in self.deps.unavailable:
                kinds.setdefault(b.type, []).append(b)
        lines = []
        for kind, line in replies.SERVICE_GROUPS.items():
            if kind in kinds:
                self.st.services.extend(b.id for b in kinds[kind])
                lines.append(replies.render(
                    line, names=replies.LIST_SEP.join(b.name for b in kinds[kind])))
        return "\n".join(lines)

    def offer_resume(self) -> None:
        """A business ended and another waits: offer to take it up again."""
        s = self.s
        while s.suspended and s.suspended[-1].business_id not in self.deps.catalog:
            self.forget_flow(s.suspended.pop())  # its business left the configuration
        offered = [f for f in s.suspended if f.worth_offering]
        if s.state not in AT_REST or not offered:
            return
        waiting = self.deps.catalog[offered[-1].business_id]
        s.suggestion = waiting.id
        self.st.parts.append(replies.render(self.deps.texts.switch_resume_offer,
                                         business=waiting.name))
        self.st.asked = True

    def group_owner(self) -> str:
        return consult.profile_owner(self.s.session_id, self.s.group_id)

    def pending(self, business: Business) -> list[FieldDef]:
        return pending_fields(business, self.s.fields)

    def pending_keys(self, business: Business) -> list[str]:
        return [f.key for f in self.pending(business)]

    def complete(self) -> None:
        """The fields (or the steps) are in: the machine says what comes next."""
        self.s.awaiting = None
        self.fire("steps_done" if self.s.state == State.STEP_EXECUTING else "fields_done")
        if self.s.state == State.CONFIRMING:
            self.s.awaiting = Awaiting.CONFIRM
        elif self.s.state == State.EXECUTING:
            self.queue_job()

    def clear(self, *, keep_files: bool = False) -> None:
        s = self.s
        if s.step_files and not keep_files:
            self.drop_files(self.owner())
        s.step_files, s.skipped = {}, []
        s.business_id = None
        s.fields = {}
        s.awaiting = None
        s.step_attempts = 0
        s.step_data = {}
        s.produced = {}
        s.result = None
        s.flow_nonce = None
        s.retryable = True
        s.job_id = None
        s.resume = None

    def forget_step(self, step_id: str) -> None:
        """Undo a step and the steps after it (they may have used its data), and
        the fields they filled: those are asked again or read again."""
        s, b = self.s, self.business
        assert b is not None
        ids = [st.id for st in b.steps]
        optional = b.steps[ids.index(step_id)].optional
        again = {step_id} if optional else set(ids[ids.index(step_id):])
        s.skipped = [x for x in s.skipped if x not in again]
        for st_id in again:
            s.step_data.pop(st_id, None)
            names = s.step_files.pop(st_id, {})
            if names:
                self.drop_files(self.owner(), tuple(f"{st_id}/{n}" for n in names))
        for key in [k for k, p in s.produced.items() if p.step in again]:
            st = s.fields.get(key)
            if st is not None and st.value == s.produced[key].value:
                st.value, st.status, st.error = None, FieldStatus.PENDING, None
            del s.produced[key]
        s.step_attempts = 0

    def values(self) -> dict[str, Any]:
        values = {k: st.value for k, st in self.s.fields.items() if st.status == FieldStatus.COLLECTED}
        values.update(self.s.step_data)
        return values

    def attach(self, values: dict[str, Any]) -> None:
        """Refer to the files steps kept for the submission in ``values`` (under the
        step id); the job driver puts them in, base64, right before the executor
        runs, so the job record never holds them."""
        for step_id, names in self.s.step_files.items():
            for name in (n for n, send in names.items() if send):
                values.setdefault(step_id, {})[name] = {
                    FILE_REF: f"{step_id}/{name}", "owner": self.owner()}

    def idempotency_key(self, business: Business, values: Mapping[str, Any]) -> str:
        payload = json.dumps([self.s.session_id, business.id, self.s.flow_nonce, values],
                             sort_keys=True, ensure_ascii=False, default=str)
        return hashlib.sha256(payload.encode()).hexdigest()[:32]

    def queue_job(self) -> None:
        """Record the submission as a job; it runs after the session is saved."""
        b = self.business
        assert b is not None and self.s.state == State.EXECUTING
        values = json.loads(json.dumps(self.values(), ensure_ascii=False, default=str))
        self.attach(values)
        long_running = self.deps.job_kinds.long_running(b)
        # Recorded as claimed by this process, which runs it right after the save.
        self.effects.job = Job(
            id=uuid.uuid4().hex, session_id=self.s.session_id, business_id=b.id,
            idempotency_key=self.idempotency_key(b, values), values=values,
            resume=self.s.resume,
            status="running", attempts=1, owner=this_process(),
            lease_until=time.time() + self.deps.lease,
            long_running=long_running,
        )
        self.s.job_id = self.effects.job.id
        self.s.awaiting = None
        self.st.asked = True
