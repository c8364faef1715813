"""One turn's work on one loaded session: the apply functions of the action table.

``Turn.prepare`` brings the session up to date (a business that left the
configuration, a job that finished), ``Turn.decide`` asks the engine once, and
``Turn.run`` applies the decision's calls through the machine and renders the
reply. Each apply function named in ``flow.actions`` is a method here; the
controller checks at import that every one exists. Everything is pure with
respect to the outside world, except knowledge look-ups and step handlers,
whose results are memoised across re-runs of the same decision.
"""

from __future__ import annotations

import hashlib
import json
import logging
import operator
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import replace
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from transitions import MachineError

from si_agent import replies
from si_agent.audit.model import AUDITED_STATES
from si_agent.config.model import Business, Check, FieldDef, Step, Theme
from si_agent.core import actions as A
from si_agent.core import consult
from si_agent.core.decision import Decision, Rule, SessionView, TextSink, ToolCall, pending_fields
from si_agent.core.display import display
from si_agent.core.machine import FlowModel
from si_agent.core.state import AT_REST, IN_DIALOGUE, SETTLED, FieldStatus, State
from si_agent.errors import ExecutorError
from si_agent.flow.steps import FILE_REF, StepContext, StepResult, Upload
from si_agent.flow.turn import TurnResult, awaited_step, snapshot
from si_agent.jobs import Job, JobError
from si_agent.jobs.model import this_process
from si_agent.knowledge import Answer, NoKnowledge
from si_agent.privacy import redact_arguments, redact_text
from si_agent.session.base import session_ref
from si_agent.session.model import (
    MAX_SUSPENDED,
    DecisionRecord,
    FieldState,
    Produced,
    Session,
    SuspendedFlow,
    ToolCallRecord,
)
from si_agent.validators import check as validate_value

if TYPE_CHECKING:
    from si_agent.flow.controller import Controller

log = logging.getLogger(__name__)

_OPS: dict[str, Callable[[Any, Any], bool]] = {
    "==": operator.eq, "!=": operator.ne, "<": operator.lt,
    "<=": operator.le, ">": operator.gt, ">=": operator.ge,
}


def join(parts: list[str]) -> str:
    """Reply lines joined, empty ones left out."""
    return "\n".join(p for p in parts if p)


class Turn:
    """One turn's work on one loaded session (see the machine's docstring).

    Everything here is pure with respect to the outside world, except knowledge
    look-ups and step handlers, whose results are memoised across re-runs.
    """

    def __init__(self, ctl: Controller, session: Session, text: str,
                 memo: dict[tuple, Any]) -> None:
        self.ctl = ctl
        self.s = session
        self.text = text
        self.memo = memo
        self.state_before = session.state
        self.decision: Decision | None = None
        self.notices: list[str] = []  # outcomes that arrived since the last turn
        self.answers: list[str] = []  # knowledge answers come next in the reply
        self.parts: list[str] = []
        self.records: list[ToolCallRecord] = []
        self.asked = False  # the next prompt was already put in the reply
        self.reasked: set[str] = set()  # fields whose error line already says what to enter
        self.job: Job | None = None  # a job this turn queued
        self.pending_suggestion: str | None = None  # the suggestion the last reply made
        self.uploads: dict[str, Upload] = {}  # photos sent with this turn, by reference
        # Step-file writes and deletes, done once the session is saved (apply_file_ops):
        # a re-run after a concurrent save must not leave files of a discarded attempt.
        self.file_ops: list[tuple[str, str, Any]] = []
        self.unreadable: set[str] = set()  # businesses whose form could not be read
        # A consultation: the theme asked before this turn, and what the turn did to its
        # slots (the reply is made of these, by flow.consult).
        self.consulting: Business | None = None  # the consultation this turn started in
        self.theme_asked: Theme | None = None
        self.opened = False  # the consultation's opening is in this reply
        self.consult_lines: list[str] = []
        self.resumed = False
        # Audited states entered (state, business, values then), written to the audit log
        # once the session is saved (``audit``): a re-run after a conflict must not.
        self.entered: list[tuple[str, Business | None, dict[str, Any]]] = []
        self.applied: Job | None = None  # the finished job whose outcome this turn applied

    # -- lifecycle --------------------------------------------------------

    def prepare(self, group_id: str | None = None) -> None:
        """Bring the session up to date before deciding: stale business, finished job,
        a consultation to take up again (``group_id``)."""
        s = self.s
        if group_id is not None and group_id != s.group_id:
            s.group_id = group_id
            b = self.business
            if b is not None and b.is_consult and s.state == State.COLLECTING:
                # Another conversation of this user: the one in progress stays stored
                # under its own group id.
                self._fire("cancel")
                self._clear()
            if s.state in AT_REST:
                self._resume_profile()
        if s.notice:
            self.notices.append(s.notice)
            s.notice = None
        if s.business_id and s.business_id not in self.ctl.catalog:
            # The business left the configuration while this session was stored.
            self._fire("cancel")
            self._clear()
            self.parts.append(replies.BUSINESS_GONE)
            return
        if s.state == State.EXECUTING and s.job_id:
            job = self.ctl.jobs.load(s.job_id)
            if job is not None and job.finished:
                self.apply_job(job)
                self.notices.extend(self.parts)
                self.parts = []
                self.asked = False

    def decide(self, on_delta: TextSink | None) -> Decision:
        # A model's free text is the answer only without a knowledge base.
        stream = on_delta if isinstance(self.ctl.knowledge, NoKnowledge) else None
        return self.ctl.engine.decide(self._view(), self.text, self._tools(), stream)

    def run(self, decision: Decision) -> TurnResult:
        s = self.s
        self.decision = decision
        b = self.business
        self.consulting = b if b is not None and b.is_consult and s.state == State.COLLECTING \
            else None
        if self.consulting is not None:
            self.theme_asked = consult.current_theme(self.consulting, s.fields)
        self.pending_suggestion = s.suggestion
        s.suggestion = None  # a suggestion is good for the next turn only
        offered = self._tools()
        applied = 0
        for call in decision.calls:
            applied += self._apply(call)
        for call in self._values_for_discovered(decision):
            applied += self._apply(call)
        if not applied:
            self._not_understood()
        self.prompt_next()
        reply = join([*self.notices, *self.answers, *self.parts])
        s.turn += 1
        self._keep_profile()
        if s.step_files:  # the photos live as long as the session
            self.file_ops.append(("touch", self._owner(), None))
        s.usage = s.usage + decision.usage
        s.remember("user", self.text)
        s.remember("assistant", reply)
        s.record(DecisionRecord(
            turn=s.turn, input=redact_text(self.text),
            engine=decision.engine or self.ctl.engine.name, state_before=self.state_before,
            state_after=s.state, offered=[t["function"]["name"] for t in offered],
            calls=self.records, rule=decision.rule.value, confidence=decision.confidence,
            reason=decision.reason,
            usage=decision.usage if decision.usage.model_calls else None,
        ))
        if log.isEnabledFor(logging.INFO):  # the digest and the list only when logged
            log.info("turn %s %s: %s -> %s via %s %s (%s); model calls %d",
                     session_ref(s.session_id), s.turn, self.state_before, s.state,
                     decision.engine, [r.name for r in self.records], decision.rule.value,
                     decision.usage.model_calls)
        return snapshot(s, self.ctl.catalog, reply, turn_usage=decision.usage)

    # -- helpers over the session -------------------------------------------

    @property
    def business(self) -> Business | None:
        bid = self.s.business_id
        b = self.ctl.catalog.get(bid) if bid else None
        if b is not None and b.discover and not b.fields:
            b = self._discovered(b) or b  # after a restart: its fields, from the cache
        return b

    @property
    def step(self) -> Step | None:
        """The step an upload goes to (``awaited_step``)."""
        return awaited_step(self.s, self.business)

    def _owner(self, nonce: str | None = None) -> str:
        """Whose files these are in the step-file store: a flow of this session."""
        return f"{self.s.session_id}:{nonce or self.s.flow_nonce}"

    def _drop_files(self, owner: str, names: tuple[str, ...] | None = None) -> None:
        self.file_ops.append(("drop", owner, names))

    def _forget_flow(self, flow: SuspendedFlow) -> None:
        """A suspended flow is given up: its photos go too."""
        if flow.step_files:
            self._drop_files(self._owner(flow.flow_nonce))

    def audit(self) -> None:
        """Write the audited states this turn entered to the audit log (after the save)."""
        for state, business, values in self.entered:
            job = self.job if state == State.EXECUTING else self.applied
            self.ctl.audit.state_change(self.s.session_id, business, state, job=job,
                                        values=values)
        self.entered = []

    def apply_file_ops(self) -> None:
        """Carry out the step-file changes of this turn (after its session was saved)."""
        files = self.ctl.files
        for op, owner, arg in self.file_ops:
            if op == "put":
                files.put(owner, *arg)
            elif op == "drop":
                files.drop(owner, arg)
            else:
                files.touch(owner)
        self.file_ops = []

    def _offer(self) -> A.Offer:
        business = self.business if self.s.state not in AT_REST else None
        return A.Offer(self.s.state, business, self.step, self.s.retryable)

    def _tools(self) -> list[dict]:
        o = self._offer()
        return self.ctl.toolset(o.state, o.business, o.step, o.retryable)

    def _view(self) -> SessionView:
        s = self.s
        return SessionView(
            state=s.state, business=self.business,
            fields={k: v.model_copy() for k, v in s.fields.items()},
            awaiting=s.awaiting, suggestion=s.suggestion, step=self.step,
            history=tuple(s.history),  # messages are frozen: shared, not copied
            result=dict(s.result) if s.result else None, catalog=self.ctl.catalog,
            suspended=tuple(f.business_id for f in s.suspended),
        )

    def _fire(self, trigger: str) -> None:
        b = self.business
        s = self.s
        model = FlowModel(
            s.state, requires_confirm=bool(b and b.require_confirm),
            steps_pending=lambda: bool(b and any(st.id not in s.step_data and not st.optional
                                                 for st in b.steps)),
            fields_pending=lambda: bool(b and self._pending(b)),
            concludes=bool(b and b.is_consult),
        )
        self.ctl.machine.fire(model, trigger)
        s.state = State(model.state)
        if s.state in AUDITED_STATES:
            self.entered.append((s.state, b, self._values()))

    def _record(self, call: ToolCall, outcome: A.CallOutcome) -> None:
        self.records.append(ToolCallRecord(
            name=call.name, arguments=redact_arguments(call.arguments, self.business),
            status=outcome.status, reason=outcome.reason.value, detail=outcome.detail,
        ))

    # -- applying tool calls --------------------------------------------------

    def _apply(self, call: ToolCall) -> int:
        """Apply one call if the current state offers it; 1 if applied."""
        offer = self._offer()
        action = A.action_for(call.name)
        if action is None or not action.offered(offer) or action.tool_name(offer) != call.name:
            outcome = A.rejected(A.Reason.NOT_OFFERED,
                                 f"{call.name} not offered in {self.s.state}")
        else:
            try:
                args = A.parse_arguments(action, call.arguments)
                outcome = getattr(self, action.name)(args)
            except A.BadArguments as exc:
                outcome = A.rejected(A.Reason.BAD_ARGUMENTS, exc.problem)
            except MachineError as exc:  # a trigger not allowed here: the call was wrong
                outcome = A.rejected(A.Reason.NOT_ALLOWED, str(exc))
        self._record(call, outcome)
        return int(outcome.applied)

    def match_business(self, args: A.MatchBusinessArgs) -> A.CallOutcome:
        business = self.ctl.catalog.get(args.business_id)
        if business is None:
            return A.rejected(A.Reason.UNKNOWN_BUSINESS,
                              f"unknown business {args.business_id!r}")
        if business.id in self.ctl.unavailable:
            self.parts.append(replies.render(replies.BUSINESS_UNAVAILABLE, name=business.name))
            self.asked = True
            return A.applied(A.Reason.UNAVAILABLE_BUSINESS, "not available online")
        if business.discover:
            business = self._discovered(business)
            if business is None:
                self.asked = True
                return A.applied(A.Reason.UNAVAILABLE_BUSINESS, "its form cannot be read now")
        s = self.s
        self._clear()
        s.suggestion = None  # whatever the last reply offered, this is what was chosen
        kept = next((f for f in reversed(s.suspended) if f.business_id == business.id), None)
        if kept is not None:
            return self._resume(business, kept)
        s.business_id = business.id
        s.fields = {f.key: FieldState() for f in business.fields}
        s.flow_nonce = uuid.uuid4().hex
        self._fire("begin")
        if business.is_consult:
            assert business.consult is not None
            self.parts.append(business.consult.opening)  # asks the first theme's questions
            self.theme_asked = business.themes[0]
            self.opened = True
            self.asked = False  # values given with the request are acknowledged next
            return A.applied()
        self.parts.append(replies.render(replies.START, name=business.name))
        self.asked = False  # after "不办这个了" the new business asks its first question
        return A.applied()

    def _values_for_discovered(self, decision: Decision) -> list[ToolCall]:
        """Values stated with the request that started a business whose form was read
        in this turn: the engine decided before the fields were known, so it reads the
        message again for them (``ValuesWithRequest``; memoised like a decision)."""
        b = self.business
        finder = self.ctl.values_with_request
        if (finder is None or b is None or not self.memo.get(("read", b.id))
                or self.s.state != State.COLLECTING
                or any(c.name == A.PROVIDE_FIELD for c in decision.calls)):
            return []
        key = ("values", b.id)
        if key not in self.memo:
            self.memo[key] = finder.start(self._view(), b, self.text)
        return [c for c in self.memo[key] if c.name == A.PROVIDE_FIELD]

    def _discovered(self, business: Business) -> Business | None:
        """The business with the fields its web form asks for (read once per turn)."""
        key = ("discover", business.id)
        if key not in self.memo:
            try:
                known = bool(self.ctl.catalog[business.id].fields)
                self.memo[key] = self.ctl.discovered(business)
                self.memo[("read", business.id)] = not known  # its fields are new
            except ExecutorError as exc:
                log.warning("business %s: its form's fields cannot be read (%s)", business.id,
                            exc.message)
                self.memo[key] = None
        ready = self.memo[key]
        if ready is None and business.id not in self.unreadable:
            self.unreadable.add(business.id)  # said once in this reply
            self.parts.append(replies.render(replies.FORM_UNREADABLE, name=business.name))
        return ready

    def _resume(self, business: Business, kept: SuspendedFlow) -> A.CallOutcome:
        """Take up a suspended business exactly where it was left."""
        s = self.s
        s.suspended.remove(kept)
        s.business_id = business.id
        s.fields = {f.key: kept.fields.get(f.key, FieldState()) for f in business.fields}
        s.step_data, s.produced = dict(kept.step_data), dict(kept.produced)
        s.step_files, s.skipped, s.resume = dict(kept.step_files), list(kept.skipped), kept.resume
        s.flow_nonce = kept.flow_nonce or uuid.uuid4().hex
        self._fire("begin")
        self.asked = False
        self.parts.append(replies.render(self.ctl.texts.switch_resumed, business=business.name))
        if s.state == State.COLLECTING and not self._pending(business):
            self._complete()  # it was confirming: confirm again
        elif s.state == State.COLLECTING and kept.awaiting in business.field_keys:
            s.awaiting = kept.awaiting
        return A.applied(detail="resumed")

    def switch_business(self, args: A.SwitchBusinessArgs) -> A.CallOutcome:
        """Put the business in progress aside, with its values, and start another."""
        current, target = self.business, self.ctl.catalog.get(args.business_id)
        if target is None:
            return A.rejected(A.Reason.UNKNOWN_BUSINESS, f"unknown business {args.business_id!r}")
        if current is not None and target.id == current.id:
            return A.rejected(A.Reason.NOT_ALLOWED, f"{target.id} is the business in progress")
        if target.id in self.ctl.unavailable:
            self.parts.append(replies.render(replies.BUSINESS_UNAVAILABLE, name=target.name))
            return A.applied(A.Reason.UNAVAILABLE_BUSINESS, "not available online")
        s = self.s
        if current is not None:
            s.suspended.append(SuspendedFlow(
                business_id=current.id, state=s.state, fields=s.fields, awaiting=s.awaiting,
                step_data=s.step_data, produced=s.produced, step_files=s.step_files,
                skipped=s.skipped, resume=s.resume, flow_nonce=s.flow_nonce))
            dropped = s.suspended[:-MAX_SUSPENDED]
            del s.suspended[:-MAX_SUSPENDED]
            for flow in dropped:
                self._forget_flow(flow)
                log.info("session %s: suspended %s dropped (more than %d put aside)",
                         session_ref(s.session_id), flow.business_id, MAX_SUSPENDED)
                old = self.ctl.catalog.get(flow.business_id)
                self.parts.append(replies.render(replies.SUSPENDED_DROPPED, limit=MAX_SUSPENDED,
                                                 name=old.name if old else flow.business_id))
        self._fire("suspend")
        self._clear(keep_files=True)  # the suspended flow keeps its photos
        return self.match_business(A.MatchBusinessArgs(business_id=target.id))

    def explain_field(self, args: A.ExplainFieldArgs) -> A.CallOutcome:
        """Why a field is needed, or what its term means; the field is asked again."""
        b = self.business
        assert b is not None
        if args.field_key not in b.field_keys:
            return A.rejected(A.Reason.UNKNOWN_FIELD, f"unknown field {args.field_key!r}")
        field = b.field(args.field_key)
        texts = self.ctl.texts
        if args.topic == "help":
            if field.help is None:
                return A.applied(detail="no help text: the prompt again")
            self.parts.append(replies.render(field.help, business=b.name, label=field.label))
            if not b.is_consult:  # a consultation asks its theme again instead
                self.parts.append(replies.render(replies.CONTINUE, name=b.name))
        else:
            why = replies.render(field.why or texts.why_default, business=b.name,
                                 label=field.label)
            self.parts.append(join([why, texts.refusal_offer]))
        if self.s.state == State.COLLECTING and args.field_key in self._pending_keys(b):
            self.s.awaiting = args.field_key
        return A.applied()

    def small_talk(self, args: A.SmallTalkArgs) -> A.CallOutcome:
        texts = self.ctl.texts
        b = self.business
        if args.kind == "greeting":
            self.parts.append(self._greeting())
        elif args.kind == "handoff" and b is not None and b.consult and b.consult.handoff:
            self.parts.append(b.consult.handoff)  # an adviser, not the 12333 hotline
        else:
            self.parts.append(replies.render(getattr(texts, args.kind),
                                             handoff=self.ctl.handoff_text))
        if self.s.state in AT_REST:
            self.asked = True
        return A.applied()

    def _greeting(self) -> str:
        examples = "、".join(b.name for b in list(self.ctl.catalog.values())[:3])
        return replies.render(self.ctl.texts.greeting, examples=examples)

    def answer_question(self, args: A.AnswerQuestionArgs) -> A.CallOutcome:
        question = args.question.strip()
        answer = self._knowledge(question) if question else None
        suggested = args.suggested_business_id
        if answer and answer.refused:
            suggested = None  # no business for an instruction or someone else's data
        elif answer and answer.suggested_business_id and not suggested:
            suggested = answer.suggested_business_id
        elif answer and answer.sources and self.decision and self.decision.rule is Rule.SUGGEST:
            # The engine only guessed by word similarity; the passages found say better
            # (a parent's account inherited is no pension estimate), even "none".
            suggested = answer.suggested_business_id
        current = self.business if self.s.state not in AT_REST else None
        if (current is not None and args.suggested_business_id in self.ctl.catalog
                and args.suggested_business_id != current.id
                and A.SWITCH_BUSINESS in A.tool_names(self._tools())):
            return self._ask_switch(question, answer, current,
                                    self.ctl.catalog[args.suggested_business_id])
        can_suggest = suggested in self.ctl.catalog and self.s.state in AT_REST
        offline = can_suggest and suggested in self.ctl.unavailable
        can_suggest = can_suggest and not offline
        model_text = self.decision.text if self.decision else None
        if answer:
            self.answers.append(answer.text)
        elif model_text and isinstance(self.ctl.knowledge, NoKnowledge):
            self.answers.append(model_text)
        elif question or not can_suggest:
            self.answers.append(replies.NO_ANSWER)
        if offline:
            self.parts.append(replies.render(replies.BUSINESS_UNAVAILABLE,
                                             name=self.ctl.catalog[suggested].name))
        elif can_suggest:
            self.s.suggestion = suggested
            self.parts.append(replies.render(replies.SUGGEST, name=self.ctl.catalog[suggested].name))
        elif (self.business is not None and self.s.state not in AT_REST
              and not self.business.is_consult):  # a consultation re-asks its theme instead
            self.parts.append(replies.render(replies.CONTINUE, name=self.business.name))
        return A.applied()

    def _ask_switch(self, question: str, answer: Answer | None, current: Business,
                    target: Business) -> A.CallOutcome:
        """Another business named mid-flow: ask once whether to switch to it."""
        if answer:
            self.answers.append(answer.text)
        if target.id in self.ctl.unavailable:
            self.parts.append(replies.render(replies.BUSINESS_UNAVAILABLE, name=target.name))
            self.parts.append(replies.render(replies.CONTINUE, name=current.name))
            return A.applied(A.Reason.UNAVAILABLE_BUSINESS, "not available online")
        filled = sum(1 for st in self.s.fields.values() if st.status == FieldStatus.COLLECTED)
        self.s.suggestion = target.id
        self.parts.append(replies.render(self.ctl.texts.switch_ask, current=current.name,
                                         filled=filled, target=target.name))
        self.asked = True
        return A.applied(detail=f"asked to switch to {target.id}")

    def _offer_resume(self) -> None:
        """A business ended and another waits: offer to take it up again."""
        s = self.s
        while s.suspended and s.suspended[-1].business_id not in self.ctl.catalog:
            self._forget_flow(s.suspended.pop())  # its business left the configuration
        if s.state not in AT_REST or not s.suspended:
            return
        waiting = self.ctl.catalog[s.suspended[-1].business_id]
        s.suggestion = waiting.id
        self.parts.append(replies.render(self.ctl.texts.switch_resume_offer,
                                         business=waiting.name))
        self.asked = True

    def _knowledge(self, question: str) -> Answer | None:
        key = ("answer", question)
        if key not in self.memo:
            # A consultation makes one model call a turn at most: the decision's.
            b = self.business
            generate = not (b is not None and b.is_consult and self.s.state == State.COLLECTING)
            self.memo[key] = self.ctl.knowledge.answer(question, generate=generate)
        return self.memo[key]

    def provide_field(self, args: A.ProvideFieldArgs) -> A.CallOutcome:
        business = self.business
        assert business is not None
        known = {k: v for k, v in args.values.items()
                 if k in business.field_keys and v is not None}
        if not known:
            return A.rejected(A.Reason.UNKNOWN_FIELD, f"unknown fields {sorted(args.values)}")
        if business.is_consult:
            return self._set_slots(business, known)
        outcome = self._set_fields(business, known)
        if self.s.state == State.COLLECTING and not self._pending(business):
            self._complete()
        return outcome

    # -- consultations (type: consult) ------------------------------------------

    def _set_slots(self, business: Business, values: Mapping[str, Any]) -> A.CallOutcome:
        """Take slot values: new ones are acknowledged, changed ones said to be
        corrected, invalid ones explained; the reply's next move is flow.consult's."""
        s, texts = self.s, business.consult
        assert texts is not None
        received: list[str] = []
        invalid: list[str] = []
        for key, raw in values.items():
            field = business.field(key)
            st = s.fields.setdefault(key, FieldState())
            said = consult.unalias(field, str(raw))
            res = validate_value(field.type, said, **field.validator_options())
            if res.ok and field.type == "text":
                # Kept as said (or as staff wrote an alias's value): "，" stays "，".
                res = replace(res, value=said.strip())
            if not res.ok:
                st.error = res.error
                if st.status not in SETTLED:
                    st.status = FieldStatus.INVALID
                self.consult_lines.append(f"{field.label}：{res.error}")
                invalid.append(key)
            elif st.status == FieldStatus.COLLECTED and st.value != res.value:
                self.consult_lines.append(replies.render(
                    texts.corrected, label=field.label, old=consult.shown(field, st.value),
                    new=consult.shown(field, res.value)))
            elif st.status != FieldStatus.COLLECTED:
                received.append(key)
            if res.ok:
                st.value, st.status, st.error, st.attempts = res.value, FieldStatus.COLLECTED, None, 0
        if received:
            received.sort(key=business.field_keys.index)
            self.consult_lines.insert(0, replies.render(
                texts.received, items=consult.items(business, received, s.fields)))
        self._consult_progress(business)
        return A.applied(detail=f"collected={received} invalid={invalid}")

    def skip_field(self, args: A.SkipFieldArgs) -> A.CallOutcome:
        b, s = self.business, self.s
        assert b is not None and b.consult is not None
        keys = [k for k in dict.fromkeys(args.field_keys) if k in b.field_keys
                and s.fields.get(k, FieldState()).status not in SETTLED]
        if not keys:
            return A.rejected(A.Reason.UNKNOWN_FIELD, f"nothing open to skip in {args.field_keys}")
        for key in keys:
            s.fields[key] = FieldState(status=FieldStatus.SKIPPED)
        self.consult_lines.append(replies.render(
            b.consult.skipped, labels="、".join(b.field(k).label for k in keys)))
        self._consult_progress(b)
        return A.applied(detail=f"skipped={keys}")

    def _consult_progress(self, business: Business) -> None:
        """Every slot in: the consultation is done, and the closing says what it found."""
        if self.s.state != State.COLLECTING or consult.current_theme(business, self.s.fields):
            return
        self._fire("fields_done")
        self.parts.extend(self.consult_lines)
        self.consult_lines = []
        self.parts.append(consult.closing(business, self.s.fields))
        self.asked = True

    def _group_owner(self) -> str:
        return consult.profile_owner(self.s.session_id, self.s.group_id)

    def _keep_profile(self) -> None:
        """Store the consultation's slots by group, or drop them once it ended."""
        b, s = self.business, self.s
        if b is not None and b.is_consult and s.state == State.COLLECTING:
            data = json.dumps(consult.profile(b, s.fields), ensure_ascii=False).encode()
            self.file_ops.append(("put", self._group_owner(), (b.id, data)))
        elif self.consulting is not None:
            self._drop_files(self._group_owner(), (self.consulting.id,))

    def _resume_profile(self) -> None:
        """A conversation named by its group: take up the consultation it left open."""
        s = self.s
        for b in (x for x in self.ctl.catalog.values() if x.is_consult):
            data = self.ctl.files.get(self._group_owner(), b.id)
            if data is None:
                continue
            try:
                saved = {k: FieldState.model_validate(v) for k, v in json.loads(data).items()}
            except (ValueError, TypeError) as exc:
                log.warning("consultation profile of %s unreadable (%s); starting afresh",
                            b.id, type(exc).__name__)
                continue
            assert b.consult is not None
            self._clear()
            s.business_id = b.id
            s.fields = {f.key: saved.get(f.key, FieldState()) for f in b.fields}
            s.flow_nonce = uuid.uuid4().hex
            self._fire("begin")
            self.parts.append(b.consult.resumed)
            self.resumed = True
            return

    def _set_fields(self, business: Business, values: Mapping[str, Any]) -> A.CallOutcome:
        s = self.s
        recorded: list[str] = []
        problems: list[str] = []
        for key, raw in values.items():
            field = business.field(key)
            st = s.fields.setdefault(key, FieldState())
            res = validate_value(field.type, str(raw), **field.validator_options())
            produced = s.produced.get(key)
            if res.ok and produced is not None and produced.value != res.value:
                step = next((x for x in business.steps if x.id == produced.step), None)
                message = replies.render(replies.TYPED_MISMATCH, label=field.label,
                                         step=step.label if step else "")
                problems += self._mark_invalid(field, st, message, "")
            elif res.ok:
                st.value, st.status, st.error, st.attempts = res.value, FieldStatus.COLLECTED, None, 0
                recorded.append(key)
            else:
                problems += self._mark_invalid(field, st, res.error or "", field.error_msg or "")
        for chk in business.checks:
            if self._check_fails(chk):
                st = s.fields[chk.reask]
                st.value, st.status = None, FieldStatus.PENDING
                if chk.reask in recorded:
                    recorded.remove(chk.reask)
                problems += self._mark_invalid(business.field(chk.reask), st, chk.message, "")
        if recorded:
            items = "、".join(
                f"{business.field(k).label} {display(business.field(k).type, s.fields[k].value)}"
                for k in recorded
            )
            self.parts.append(replies.render(replies.RECORDED, items=items))
        self.parts.extend(problems)
        if s.awaiting in recorded:
            s.awaiting = None
        bad = [k for k in values if s.fields[k].status != FieldStatus.COLLECTED]
        return A.applied(detail=f"collected={recorded} invalid={bad}")

    def _mark_invalid(self, field: FieldDef, st: FieldState, diagnosis: str,
                      instruction: str) -> list[str]:
        """Count a failed attempt; the reply lines to show. A collected value is kept."""
        b = self.business
        assert b is not None
        st.attempts += 1
        st.error = diagnosis
        if st.status != FieldStatus.COLLECTED:
            st.status = FieldStatus.INVALID
            self.s.awaiting = field.key  # a kept value is not asked for again
        if instruction:
            self.reasked.add(field.key)
        lines = [replies.render(replies.INVALID, diagnosis=diagnosis, instruction=instruction)]
        if st.attempts >= b.max_attempts:
            lines.append(replies.render(replies.ESCALATE, label=field.label, attempts=st.attempts))
            st.attempts = 0
            self.reasked.discard(field.key)  # after the offer to stop, ask plainly again
        return lines

    def _check_fails(self, chk: Check) -> bool:
        left, right = self.s.fields.get(chk.left), self.s.fields.get(chk.right)
        if not left or not right or left.status != FieldStatus.COLLECTED or right.status != FieldStatus.COLLECTED:
            return False
        try:
            return not _OPS[chk.op](left.value, right.value)
        except TypeError:
            return True

    def _pending(self, business: Business) -> list[FieldDef]:
        return pending_fields(business, self.s.fields)

    def _pending_keys(self, business: Business) -> list[str]:
        return [f.key for f in self._pending(business)]

    def _complete(self) -> None:
        """The fields (or the steps) are in: the machine says what comes next."""
        self.s.awaiting = None
        self._fire("steps_done" if self.s.state == State.STEP_EXECUTING else "fields_done")
        if self.s.state == State.CONFIRMING:
            self.s.awaiting = "confirm"
        elif self.s.state == State.EXECUTING:
            self._queue_job()

    def cancel_flow(self, args: A.NoArgs) -> A.CallOutcome:
        b = self.business
        s = self.s
        if s.state in AT_REST:
            waiting = [f for f in s.suspended if f.business_id == self.pending_suggestion]
            if waiting:  # "不用了" to the offer to take a suspended business up again
                s.suspended.remove(waiting[-1])
                self._forget_flow(waiting[-1])
                name = self.ctl.catalog[waiting[-1].business_id].name
                self.parts.append(replies.render(replies.CANCELLED, name=name))
                self.asked = True
                return A.applied(detail=f"dropped suspended {waiting[-1].business_id}")
            self.parts.append(replies.NOTHING_TO_CANCEL)
            return A.applied(A.Reason.NOTHING_TO_CANCEL, "nothing to cancel")
        if s.state == State.EXECUTING and b is not None:
            job = self.ctl.jobs.load(s.job_id) if s.job_id else None
            if job is not None and not job.finished:
                self.parts.append(replies.render(replies.JOB_CANNOT_CANCEL, name=b.name))
                self.asked = True
                return A.applied(A.Reason.JOB_IN_PROGRESS, "a submitted job cannot be cancelled")
        self._fire("cancel")
        self._clear()
        calls = self.decision.calls if self.decision else []
        then_starts = any(c.name == A.MATCH_BUSINESS for c in calls)
        text = replies.DROPPED if then_starts else replies.CANCELLED
        self.parts.append(replies.render(text, name=b.name) if b
                          else replies.NOTHING_TO_CANCEL)
        self.asked = True
        if not then_starts:  # dropped for another business: no offer in between
            self._offer_resume()
        return A.applied()

    def _clear(self, *, keep_files: bool = False) -> None:
        s = self.s
        if s.step_files and not keep_files:
            self._drop_files(self._owner())
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

    def confirm_submit(self, args: A.NoArgs) -> A.CallOutcome:
        self._fire("confirm")
        self._queue_job()
        return A.applied()

    def retry_submit(self, args: A.NoArgs) -> A.CallOutcome:
        # Offered only after a retryable failure (see flow.actions).
        self._fire("retry")
        self._queue_job()
        return A.applied()

    def modify_info(self, args: A.ModifyInfoArgs) -> A.CallOutcome:
        b = self.business
        assert b is not None
        key = args.field_key
        if key not in b.field_keys:
            return A.rejected(A.Reason.UNKNOWN_FIELD, f"unknown field {key!r}")
        self._fire("fix" if self.s.state == State.FAILED else "modify")
        value = args.value
        st = self.s.fields.setdefault(key, FieldState())
        st.status = FieldStatus.PENDING
        if value not in (None, ""):
            # The old value is what the user called wrong: an invalid new one
            # leaves the field to be asked again, not the old value in place.
            outcome = self._set_fields(b, {key: value})
            if not self._pending(b):
                self._complete()
            return outcome
        self.s.awaiting = key
        self.parts.append(replies.render(replies.MODIFY_ASK, label=b.field(key).label))
        return A.applied(A.Reason.AWAITING_VALUE, "awaiting new value")

    def redo_step(self, args: A.RedoStepArgs) -> A.CallOutcome:
        b = self.business
        assert b is not None
        step = next((st for st in b.steps if st.id == args.step_id), None)
        if step is None:
            return A.rejected(A.Reason.UNKNOWN_STEP, f"unknown step {args.step_id!r}")
        done = step.id in self.s.step_data
        self._fire("redo")
        self._forget_step(step.id)
        self.s.awaiting = step.id  # an optional step is awaited only when asked for
        if self._uploads_next(step):
            return A.applied(detail="upload follows")
        self.parts.append(replies.render(replies.STEP_REDO_ASK if done else replies.STEP_ASK,
                                         label=step.label))
        if step.optional:
            self.parts.append(replies.STEP_OPTIONAL_HINT)
        return A.applied()

    def _uploads_next(self, step: Step) -> bool:
        """Whether this decision uploads for ``step`` right after (no ask in between)."""
        calls = self.decision.calls if self.decision else []
        return any(c.name == A.step_tool_name(step) for c in calls)

    def skip_step(self, args: A.NoArgs) -> A.CallOutcome:
        """Go on without the optional step offered (offered only for one)."""
        step = self.step
        assert step is not None and step.optional
        s = self.s
        s.skipped.append(step.id)
        self.parts.append(replies.render(replies.STEP_SKIPPED, label=step.label))
        if s.state == State.STEP_EXECUTING:
            s.awaiting = None
            if self.step is None:
                self._complete()
        return A.applied(detail=f"skipped {step.id}")

    def _forget_step(self, step_id: str) -> None:
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
                self._drop_files(self._owner(), tuple(f"{st_id}/{n}" for n in names))
        for key in [k for k, p in s.produced.items() if p.step in again]:
            st = s.fields.get(key)
            if st is not None and st.value == s.produced[key].value:
                st.value, st.status, st.error = None, FieldStatus.PENDING, None
            del s.produced[key]
        s.step_attempts = 0

    def upload(self, args: A.UploadArgs) -> A.CallOutcome:
        step, b = self.step, self.business
        assert step is not None and b is not None
        handler = self.ctl.step_handlers.get(step.handler)
        if handler is None:
            self.parts.append(replies.render(replies.STEP_UNAVAILABLE, label=step.label))
            self.asked = True
            return A.applied(A.Reason.STEP_UNAVAILABLE, f"no handler {step.handler!r}")
        key = ("step", step.id, args.file)
        if key not in self.memo:
            context = StepContext(
                business=b,
                values=MappingProxyType({k: st.value for k, st in self.s.fields.items()
                                         if st.status == FieldStatus.COLLECTED}),
                step_data=MappingProxyType(dict(self.s.step_data)),
                file=self._kept_file,
            )
            try:
                upload = self.uploads.get(args.file) or Upload(ref=args.file)
                self.memo[key] = handler.run(step, upload, context)
            except Exception as exc:  # a broken handler must not break the dialogue
                log.error("step %s of %s: handler %s crashed (%s)", step.id, b.id, step.handler,
                          type(exc).__name__)
                self.memo[key] = StepResult(error=replies.STEP_CRASHED)
        result: StepResult = self.memo[key]
        s = self.s
        error = result.error or self._bad_produced(b, step, result)
        if error is not None and result.redo in s.step_data and result.redo != step.id:
            # What this step needs from an earlier one is gone or unusable: that one again.
            earlier = next(st for st in b.steps if st.id == result.redo)
            self._forget_step(earlier.id)
            self.parts.append(replies.render(replies.STEP_FAILED, label=step.label, error=error))
            return A.applied(A.Reason.STEP_FAILED, f"step failed: {earlier.id} again")
        if error is not None:
            s.step_attempts += 1
            self.parts.append(replies.render(replies.STEP_FAILED, label=step.label,
                                             error=error or step.error_msg or ""))
            if step.optional:
                self.parts.append(replies.STEP_OPTIONAL_HINT)
                if self.state_before in IN_DIALOGUE:
                    s.awaiting = None  # taken up in passing: the dialogue goes on
                    self._complete()
                return A.applied(A.Reason.STEP_FAILED, "optional step failed")
            if s.step_attempts >= b.max_attempts:
                self.parts.append(replies.render(replies.ESCALATE, label=step.label,
                                                 attempts=s.step_attempts))
                s.step_attempts = 0
            return A.applied(A.Reason.STEP_FAILED, "step failed")
        s.step_data[step.id] = result.data
        s.step_attempts = 0
        for name, data in result.files.items():
            self.file_ops.append(("put", self._owner(), (f"{step.id}/{name}", data)))
        s.step_files[step.id] = {name: name in result.submit for name in result.files}
        self.parts.append(replies.render(replies.STEP_DONE, label=step.label))
        self._take_produced(b, step, result.fields)
        if self.step is None:
            self._complete()
        return A.applied(detail="step done")

    def _kept_file(self, step_id: str, name: str) -> bytes | None:
        if name not in self.s.step_files.get(step_id, {}):
            return None
        return self.ctl.files.get(self._owner(), f"{step_id}/{name}")

    def _bad_produced(self, b: Business, step: Step, result: StepResult) -> str | None:
        """Why a value the step read is unusable (it does not validate), or None."""
        for key, raw in result.fields.items():
            if key not in b.field_keys or (step.produces and key not in step.produces):
                log.warning("step %s of %s produced an undeclared field %r; ignored",
                            step.id, b.id, key)
                continue
            field = b.field(key)
            res = validate_value(field.type, str(raw), **field.validator_options())
            if not res.ok:
                return f"{field.label}无法识别（{res.error}）。{step.error_msg or ''}"
        return None

    def _take_produced(self, b: Business, step: Step, fields: Mapping[str, Any]) -> None:
        """Fill fields from a step; a value the citizen typed that differs is an error."""
        s = self.s
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
                self.parts.append(st.error)
                self.reasked.add(key)
                s.awaiting = key
            else:
                st.value, st.status, st.error, st.attempts = value, FieldStatus.COLLECTED, None, 0
                recorded.append(key)
        if recorded:
            items = "、".join(f"{b.field(k).label} {display(b.field(k).type, s.fields[k].value)}"
                              for k in recorded)
            self.parts.append(replies.render(replies.RECORDED, items=items))

    # -- executing --------------------------------------------------------------

    def _values(self) -> dict[str, Any]:
        values = {k: st.value for k, st in self.s.fields.items() if st.status == FieldStatus.COLLECTED}
        values.update(self.s.step_data)
        return values

    def _attach(self, values: dict[str, Any]) -> None:
        """Refer to the files steps kept for the submission in ``values`` (under the
        step id); the job driver puts them in, base64, right before the executor
        runs, so the job record never holds them."""
        for step_id, names in self.s.step_files.items():
            for name in (n for n, send in names.items() if send):
                values.setdefault(step_id, {})[name] = {
                    FILE_REF: f"{step_id}/{name}", "owner": self._owner()}

    def _idempotency_key(self, business: Business, values: Mapping[str, Any]) -> str:
        payload = json.dumps([self.s.session_id, business.id, self.s.flow_nonce, values],
                             sort_keys=True, ensure_ascii=False, default=str)
        return hashlib.sha256(payload.encode()).hexdigest()[:32]

    def _queue_job(self) -> None:
        """Record the submission as a job; it runs after the session is saved."""
        b = self.business
        assert b is not None and self.s.state == State.EXECUTING
        values = json.loads(json.dumps(self._values(), ensure_ascii=False, default=str))
        self._attach(values)
        long_running = self.ctl.executor_for(b).long_running
        # Recorded as claimed by this process, which runs it right after the save.
        self.job = Job(
            id=uuid.uuid4().hex, session_id=self.s.session_id, business_id=b.id,
            idempotency_key=self._idempotency_key(b, values), values=values,
            resume=self.s.resume,
            status="running", attempts=1, owner=this_process(),
            lease_until=time.time() + self.ctl.driver.lease,
            long_running=long_running,
        )
        self.s.job_id = self.job.id
        self.s.awaiting = None
        self.asked = True

    def apply_job(self, job: Job) -> None:
        """Apply a finished job's outcome: done with the result, or failed."""
        b = self.business
        self.applied = job
        if b is None:  # the business left the configuration while its job ran
            self._fire("cancel")
            self._clear()
            self.parts.append(replies.BUSINESS_GONE)
            self.asked = True
            return
        if job.status == "succeeded":
            self._fire("succeed")
            if self.s.step_files:  # the photos were for this submission only
                self._drop_files(self._owner())
                self.s.step_files = {}
            self.s.result = job.result or {}
            self.s.awaiting = None
            self.parts.append(self.outcome_text(job))
            self.asked = True
            self._offer_resume()
            return
        self._fire("fail")
        self._failed(b, job.error or JobError(message=replies.EXECUTOR_CRASHED))

    def outcome_text(self, job: Job) -> str:
        """What the citizen is told about a finished job (changes nothing)."""
        b = self.business
        if b is None or b.api is None or job.status != "succeeded":
            return job.error.message if job.error else replies.EXECUTOR_CRASHED
        shown = {k: (display(b.field(k).type, v) if k in b.field_keys else v)
                 for k, v in self._values().items()}
        return replies.render(b.api.result_template, {**shown, **(job.result or {})})

    def _failed(self, b: Business, error: JobError) -> None:
        s = self.s
        if error.resume is not None:
            s.resume = error.resume
        field_errors = {k: v for k, v in error.field_errors.items() if k in b.field_keys}
        step_errors = {k: v for k, v in error.field_errors.items()
                       if k in {st.id for st in b.steps}}
        s.retryable = error.retryable and not (field_errors or step_errors)
        if step_errors:
            step_id, message = next(iter(step_errors.items()))
            self._fire("redo")
            self._forget_step(step_id)
            s.awaiting = step_id
            step = next(st for st in b.steps if st.id == step_id)
            self.parts.append(replies.render(replies.EXEC_STEP_FAILED, label=step.label,
                                             message=_sentence(message)))
            if step.optional:
                self.parts.append(replies.STEP_OPTIONAL_HINT)
            return
        if field_errors:
            self._fire("fix")
            for key, message in field_errors.items():
                st = s.fields.setdefault(key, FieldState())
                st.status, st.error = FieldStatus.FAILED, message
            items = "；".join(f"{b.field(k).label}：{m.rstrip('。')}"
                             for k, m in field_errors.items())
            self.parts.append(replies.render(replies.EXEC_FIELD_FAILED, items=items))
            s.awaiting = next(iter(field_errors))
            return
        self.asked = True
        if error.unknown:
            s.awaiting = None
            self.parts.append(error.message)
        elif error.retryable:
            s.awaiting = "retry"
            template = replies.EXEC_FAILED if b.type == "handle" else replies.QUERY_FAILED
            self.parts.append(replies.render(template, message=error.message))
        else:
            s.awaiting = None
            self.parts.append(replies.render(replies.EXEC_REFUSED, message=error.message))

    # -- the closing prompt --------------------------------------------------------

    def _not_understood(self) -> None:
        s = self.s
        if self.resumed:
            return  # "继续" took the consultation up again: its theme is asked next
        if s.state in AT_REST:
            self.parts.append(self._greeting())
            self.asked = True
        elif (self.pending_suggestion and self.business is not None
              and self.pending_suggestion != self.business.id):
            # No switch after "要先办理…吗？": the business in progress goes on.
            self.parts.append(replies.render(self.ctl.texts.switch_kept,
                                             current=self.business.name))
        elif s.state == State.EXECUTING:
            return  # phase 2 says where the submission stands
        elif s.state == State.FAILED and not s.retryable:
            self.parts.append(replies.REFUSED_REASK)
            self.asked = True
        else:
            self.parts.append(replies.NOT_UNDERSTOOD)

    def prompt_next(self) -> None:
        """End the reply with what the dialogue needs next, unless already asked."""
        if self.asked:
            return
        s, b = self.s, self.business
        if b is None or s.state in (*AT_REST, State.EXECUTING):
            return
        if s.state == State.COLLECTING and b.is_consult:
            if self.consult_lines or not self.opened:  # (the opening asks the first theme)
                self.parts.extend(self.consult_lines)
                self.parts.append(consult.next_move(b, s.fields, self.theme_asked))
        elif s.state == State.COLLECTING:
            pending = self._pending(b)
            if not pending:
                return
            pending_keys = [f.key for f in pending]
            first = s.awaiting if s.awaiting in pending_keys else pending_keys[0]
            s.awaiting = first
            ask = [b.field(first)] + [f for f in pending if f.key != first]
            self.parts.extend(f.prompt for f in ask[: max(1, b.ask.max_fields)]
                              if f.key not in self.reasked)
        elif s.state == State.STEP_EXECUTING:
            step = self.step
            if step is not None:
                s.awaiting = step.id
                self.parts.append(step.prompt)
        elif s.state == State.CONFIRMING:
            s.awaiting = "confirm"
            self.parts.append(self._confirm_text(b))
        elif s.state == State.FAILED:
            s.awaiting = "retry" if s.retryable else None
            self.parts.append(replies.FAILED_REASK if s.retryable else replies.REFUSED_REASK)

    def _confirm_text(self, b: Business) -> str:
        lines = [
            replies.render(replies.SUMMARY_LINE, label=f.label,
                           value=display(f.type, self.s.fields[f.key].value))
            for f in b.fields if self.s.fields.get(f.key) and self.s.fields[f.key].value is not None
        ]
        lines += [
            replies.render(replies.SUMMARY_LINE, label=st.label, value=(
                replies.STEP_SUMMARY_VALUE if st.id in self.s.step_data
                else replies.STEP_DECLINED if st.id in self.s.skipped
                else replies.STEP_NOT_GIVEN))
            for st in b.steps if st.id in self.s.step_data or st.optional
        ]
        text = replies.render(b.confirm_text or replies.DEFAULT_CONFIRM,
                              summary="\n".join(lines), name=b.name)
        optional = [st.prompt for st in b.steps if st.optional
                    and st.id not in self.s.step_data and st.id not in self.s.skipped]
        return join([text, *optional])


def _sentence(text: str) -> str:
    text = text.strip()
    return text if text.endswith(("。", "！", "？", ".")) else text + "。"
