"""The controller: runs one turn through the machine and owns the session and its jobs.

See ``flow.machine`` for the turn lifecycle and ``flow.actions`` for the
action table. Every model or rule decision is untrusted: a call whose tool the
current state does not offer, or whose arguments do not validate or name
unknown businesses, fields or steps, is rejected and recorded, never applied.

Execution is two-phase and durable::

    phase 1 (the turn, pure)      confirm → state executing, a queued Job with the
                                  idempotency key; the job record is written,
                                  then the session (compare-and-set)
    phase 2 (after the save)      claim the job (compare-and-set queued → running),
                                  run the executor once, record the outcome on the job
    outcome (small transaction)   load the session, apply the job's outcome, save;
                                  on a conflict only this pure step runs again

A save conflict re-applies the same decision to the fresh session: the model,
the knowledge base and step handlers are not called again, and no executor
has run yet. A job whose process died is resumed (same idempotency key) when
its executor is resumable, or reported as "outcome unknown" when it is not.
"""

from __future__ import annotations

import hashlib
import json
import logging
import operator
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from types import MappingProxyType
from typing import Any

from transitions import MachineError

from si_agent import replies
from si_agent.config.model import Business, Check, FieldDef, Step
from si_agent.engine.base import (
    Decision,
    IntentEngine,
    SessionView,
    TextSink,
    ToolCall,
    pending_fields,
)
from si_agent.errors import ExecutorError, JobConflict, SessionConflict
from si_agent.executor import Executors
from si_agent.executor.base import Executor
from si_agent.flow import actions as A
from si_agent.flow.machine import DialogueMachine, FlowModel
from si_agent.flow.steps import (
    StepContext,
    StepHandler,
    StepResult,
    Upload,
    registered_step_handlers,
    unavailable_businesses,
)
from si_agent.flow.turn import TurnResult, display, job_view, snapshot
from si_agent.jobs import Job, JobError, JobRunner, JobStore, ThreadRunner, create_job_store
from si_agent.jobs.model import this_process
from si_agent.knowledge import Answer, Knowledge, NoKnowledge
from si_agent.privacy import redact_arguments, redact_text
from si_agent.session.base import SessionStore, session_ref
from si_agent.session.model import DecisionRecord, FieldState, Session, ToolCallRecord
from si_agent.validators import check as validate_value

log = logging.getLogger(__name__)

_MAX_CONFLICT_RETRIES = 5
SYNC_LEASE = 120.0  # a synchronous executor answers well within this
LONG_LEASE = 1800.0  # a long-running job's lease; its progress reports extend it
_OPS: dict[str, Callable[[Any, Any], bool]] = {
    "==": operator.eq, "!=": operator.ne, "<": operator.lt,
    "<=": operator.le, ">": operator.gt, ">=": operator.ge,
}


class SessionLocks:
    """One lock per session id, made on demand and dropped when nobody holds it.

    Turns of one user run one at a time in this process; no lock is shared by
    two users. Across processes the stores' compare-and-set decides.
    """

    def __init__(self) -> None:
        self._mutex = threading.Lock()
        self._locks: dict[str, list] = {}

    @contextmanager
    def hold(self, key: str) -> Iterator[None]:
        with self._mutex:
            entry = self._locks.setdefault(key, [threading.Lock(), 0])
            entry[1] += 1
        try:
            with entry[0]:
                yield
        finally:
            with self._mutex:
                entry[1] -= 1
                if entry[1] == 0:
                    del self._locks[key]


class Controller:
    """Runs turns: load → decide → apply through the machine → reply → save → execute."""

    def __init__(
        self,
        catalog: Mapping[str, Business],
        store: SessionStore,
        engine: IntentEngine,
        executor: Executors,
        *,
        knowledge: Knowledge | None = None,
        step_handlers: Mapping[str, StepHandler] | None = None,
        jobs: JobStore | None = None,
        runner: JobRunner | None = None,
        max_message_chars: int = 2000,
    ) -> None:
        self.catalog = dict(catalog)
        self.store = store
        self.engine = engine
        self.executor = executor
        self.knowledge = knowledge or NoKnowledge()
        self.step_handlers = dict(
            registered_step_handlers() if step_handlers is None else step_handlers
        )
        self.jobs = jobs if jobs is not None else create_job_store(store)
        self.runner = runner or ThreadRunner()
        self.max_message_chars = max_message_chars
        self.machine = DialogueMachine()
        self.unavailable = unavailable_businesses(self.catalog, self.step_handlers)
        for bid, names in self.unavailable.items():
            log.warning("business %s is not available online: step handler(s) %s not "
                        "registered on this deployment", bid, ", ".join(names))
        self._locks = SessionLocks()
        self._toolsets: dict[tuple, list[dict]] = {}

    # -- public API -------------------------------------------------------

    def handle(
        self, session_id: str, message: str, on_delta: TextSink | None = None
    ) -> TurnResult:
        """Run one user turn and return the turn object.

        ``on_delta`` receives a model's free-text answer as it is generated,
        when there is no knowledge base to answer instead; the reply then
        starts with exactly that text.
        """
        text = (message or "").strip()
        if not text or len(text) > self.max_message_chars:
            session = self._load(session_id)
            reply = (
                replies.EMPTY_MESSAGE if not text
                else replies.render(replies.TOO_LONG, limit=self.max_message_chars)
            )
            return snapshot(session, self.catalog, reply)
        with self._locks.hold(session_id):
            memo: dict[tuple, Any] = {}  # knowledge answers and step results, across re-runs
            decision: Decision | None = None
            for _ in range(_MAX_CONFLICT_RETRIES):
                session = self._load(session_id)
                turn = _Turn(self, session, text, memo)
                turn.prepare()
                if decision is None:
                    decision = turn.decide(on_delta)
                result = turn.run(decision)
                if turn.job is not None:
                    self.jobs.save(turn.job)  # the job record first, then the session
                try:
                    self.store.save(session)
                except SessionConflict:
                    log.info("session %s changed concurrently; applying the decision again",
                             session_ref(session_id))
                    continue
                break
            else:
                raise SessionConflict(session_ref(session_id), expected=-1, found=None)
            if session.state == "executing" and session.job_id:
                return self._drive(session, result, turn.job)
            return result

    def toolset(self, state: str, business: Business | None, step: Step | None,
                retryable: bool = True) -> list[dict]:
        """The tools ``state`` offers (built once per state, business, step and retryability)."""
        key = (state, business.id if business else None, step.id if step else None, retryable)
        tools = self._toolsets.get(key)
        if tools is None:
            tools = self._toolsets[key] = A.toolset(state, business, step, self.catalog,
                                                    retryable=retryable)
        return tools

    def current(self, session_id: str) -> TurnResult:
        """The turn object for the stored session, without a reply.

        A job that finished since the last turn is applied first (its text is
        the ``notice``).
        """
        session = self._load(session_id)
        if session.state == "executing" and session.job_id:
            job = self.jobs.load(session.job_id)
            if job is not None and job.finished:
                session, _ = self._apply_outcome(session_id, job, same_turn=False)
        return snapshot(session, self.catalog, job=self._job_of(session))

    def reset(self, session_id: str) -> TurnResult:
        """Forget the session: the user starts again in idle."""
        self.store.delete(session_id)
        return snapshot(Session(session_id=session_id), self.catalog)

    def watch(self, session_id: str, *, timeout: float = 120.0,
              interval: float = 0.25) -> Iterator[TurnResult]:
        """Turn objects as a running job reports progress, ending with its outcome.

        Stops when the session is no longer executing (the last object carries
        the outcome as ``notice``, which counts as delivered and is cleared), or
        after ``timeout``.
        """
        deadline = time.monotonic() + timeout
        last: tuple | None = None
        while time.monotonic() < deadline:
            turn = self.current(session_id)
            if turn.state != "executing":
                if turn.notice:
                    self._clear_notice(session_id, turn.notice)
                yield turn
                return
            mark = (turn.job.status, turn.job.progress) if turn.job else None
            if mark != last:
                last = mark
                yield turn
            time.sleep(interval)

    def _clear_notice(self, session_id: str, notice: str) -> None:
        for _ in range(_MAX_CONFLICT_RETRIES):
            session = self._load(session_id)
            if session.notice != notice:
                return
            session.notice = None
            try:
                self.store.save(session)
                return
            except SessionConflict:
                continue

    # -- sessions and jobs ----------------------------------------------------

    def _load(self, session_id: str) -> Session:
        return self.store.load(session_id) or Session(session_id=session_id)

    def _job_of(self, session: Session) -> Job | None:
        return self.jobs.load(session.job_id) if session.job_id else None

    def executor_for(self, business: Business) -> Executor:
        return self.executor.get(business)

    def _drive(self, session: Session, result: TurnResult, recorded: Job | None) -> TurnResult:
        """Phase 2: run, resume or report the session's job; the reply gains its part.

        ``recorded`` is the job this turn wrote, already claimed by this process;
        any other unfinished job is claimed first (if it is queued, or its
        process died), or reported as running elsewhere.
        """
        job = recorded if recorded is not None else self.jobs.load(session.job_id or "")
        business = self.catalog.get(session.business_id or "")
        if job is None or business is None:
            return result
        if not job.finished and recorded is None:
            claimed = self._claim(job, business)
            if claimed is None:
                return _amend(result, self._running_text(business, job), job=job)
            job = claimed
        if not job.finished:
            if job.long_running:
                self.runner.submit(job.id, self._run_in_background)
                text = replies.render(replies.JOB_QUEUED, name=business.name)
                return _amend(result, [text], job=job)
            job = self._execute(job, business)
        session, parts = self._apply_outcome(session.session_id, job, same_turn=True,
                                             session=session)
        final = snapshot(session, self.catalog, job=job, turn_usage=result.usage.get("turn"))
        return final.model_copy(update={"reply": _join([result.reply, *parts])})

    @staticmethod
    def _running_text(business: Business, job: Job) -> list[str]:
        lines = [replies.render(replies.JOB_RUNNING, name=business.name)]
        if job.progress:
            lines.append(replies.render(replies.JOB_PROGRESS, progress=job.progress))
        return lines

    def _claim(self, job: Job, business: Business) -> Job | None:
        """Take an unfinished job of another turn to run it; None if it is not ours to run.

        A queued job is ours once its recorder is gone; a running one only if its
        process died, and then it runs again only if its executor is resumable
        (otherwise it is finished here as "outcome unknown").
        """
        if not job.stale():
            return None
        if job.status == "running":
            if not self.executor_for(business).resumable:
                log.warning("job %s of %s: its process died mid-run and the executor is not "
                            "resumable; reporting the outcome as unknown", job.id, business.id)
                return self._finish(job, error=JobError(
                    message=replies.render(replies.JOB_UNKNOWN, name=business.name),
                    retryable=False, unknown=True))
            log.warning("job %s of %s: its process died mid-run; resuming with the same "
                        "idempotency key", job.id, business.id)
        lease = LONG_LEASE if job.long_running else SYNC_LEASE
        claimed = job.model_copy(update={"status": "running", "owner": this_process(),
                                         "attempts": job.attempts + 1,
                                         "lease_until": time.time() + lease})
        try:
            self.jobs.save(claimed)
        except JobConflict:
            return None
        return claimed

    def _execute(self, job: Job, business: Business) -> Job:
        """Run the claimed job's executor once and record the outcome on the job."""
        def progress(text: str) -> None:
            self._report(job.id, text)

        try:
            result = self.executor.run(business, job.values, idempotency_key=job.idempotency_key,
                                       progress=progress)
        except ExecutorError as exc:
            return self._finish(job, error=JobError(
                message=exc.message, field_errors=exc.field_errors,
                retryable=exc.retryable, status=exc.status))
        except Exception:
            log.exception("job %s of %s: the executor crashed", job.id, business.id)
            return self._finish(job, error=JobError(message=replies.EXECUTOR_CRASHED))
        return self._finish(job, result=result)

    def _finish(self, job: Job, *, result: dict | None = None,
                error: JobError | None = None) -> Job:
        """Record the outcome on the job (compare-and-set, re-read on conflict)."""
        for _ in range(_MAX_CONFLICT_RETRIES):
            done = job.model_copy(update={
                "status": "failed" if error else "succeeded", "result": result, "error": error,
                "finished_at": time.time(), "progress": None})
            try:
                self.jobs.save(done)
                return done
            except JobConflict:  # a progress report landed meanwhile
                fresh = self.jobs.load(job.id)
                if fresh is None or fresh.finished:
                    return fresh or done
                job = fresh
        raise JobConflict(job.id, job.version, None)

    def _report(self, job_id: str, text: str) -> None:
        """A long-running executor's progress: shown to the citizen, and a fresh lease."""
        for _ in range(_MAX_CONFLICT_RETRIES):
            job = self.jobs.load(job_id)
            if job is None or job.finished:
                return
            try:
                self.jobs.save(job.model_copy(update={
                    "progress": text, "lease_until": time.time() + LONG_LEASE}))
                return
            except JobConflict:
                continue

    def _run_in_background(self, job_id: str) -> None:
        job = self.jobs.load(job_id)
        business = self.catalog.get(job.business_id) if job else None
        if job is None or business is None or job.status != "running":
            return
        job = self._execute(job, business)
        self._apply_outcome(job.session_id, job, same_turn=False)

    def _apply_outcome(self, session_id: str, job: Job, *, same_turn: bool,
                       session: Session | None = None) -> tuple[Session, list[str]]:
        """The small transaction that applies a finished job to its session.

        ``session`` is the caller's freshly saved copy, tried first; on a
        conflict the stored one is read again.
        """
        for _ in range(_MAX_CONFLICT_RETRIES):
            session = session if session is not None else self._load(session_id)
            if session.state != "executing" or session.job_id != job.id:
                return session, []  # applied already, or the flow was left
            turn = _Turn(self, session, "", {})
            turn.apply_job(job)
            turn.prompt_next()
            text = _join(turn.parts)
            if same_turn and session.history and session.history[-1].role == "assistant":
                last = session.history[-1]
                session.history[-1] = last.model_copy(update={"text": _join([last.text, text])})
            else:
                session.notice = _join([session.notice or "", text])
                session.remember("assistant", text)
            try:
                self.store.save(session)
            except SessionConflict:
                session = None
                continue
            if same_turn:
                return session, turn.parts
            return session, []
        raise SessionConflict(session_ref(session_id), expected=-1, found=None)


def _join(parts: list[str]) -> str:
    return "\n".join(p for p in parts if p)


def _amend(result: TurnResult, extra: list[str], *, job: Job | None) -> TurnResult:
    return result.model_copy(update={"reply": _join([result.reply, *extra]),
                                     "job": job_view(job)})


class _Turn:
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

    # -- lifecycle --------------------------------------------------------

    def prepare(self) -> None:
        """Bring the session up to date before deciding: stale business, finished job."""
        s = self.s
        if s.notice:
            self.notices.append(s.notice)
            s.notice = None
        if s.business_id and s.business_id not in self.ctl.catalog:
            # The business left the configuration while this session was stored.
            self._fire("cancel")
            self._clear()
            self.parts.append(replies.BUSINESS_GONE)
            return
        if s.state == "executing" and s.job_id:
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
        s.suggestion = None  # a suggestion is good for the next turn only
        offered = self._tools()
        applied = 0
        for call in decision.calls:
            applied += self._apply(call)
        if not applied:
            self._not_understood()
        self.prompt_next()
        reply = _join([*self.notices, *self.answers, *self.parts])
        s.turn += 1
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
        log.info("turn %s %s: %s -> %s via %s %s (%s); model calls %d",
                 session_ref(s.session_id), s.turn, self.state_before, s.state, decision.engine,
                 [r.name for r in self.records], decision.rule.value, decision.usage.model_calls)
        return snapshot(s, self.ctl.catalog, reply, turn_usage=decision.usage)

    # -- helpers over the session -------------------------------------------

    @property
    def business(self) -> Business | None:
        bid = self.s.business_id
        return self.ctl.catalog.get(bid) if bid else None

    @property
    def step(self) -> Step | None:
        """The step awaited: the first one not done, while executing steps."""
        b = self.business
        if b is None or self.s.state != "step_executing":
            return None
        return next((st for st in b.steps if st.id not in self.s.step_data), None)

    def _offer(self) -> A.Offer:
        business = self.business if self.s.state not in ("idle", "done") else None
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
        )

    def _fire(self, trigger: str) -> None:
        b = self.business
        s = self.s
        model = FlowModel(
            s.state, requires_confirm=bool(b and b.require_confirm),
            steps_pending=lambda: bool(b and any(st.id not in s.step_data for st in b.steps)),
            fields_pending=lambda: bool(b and self._pending(b)),
        )
        self.ctl.machine.fire(model, trigger)
        s.state = model.state

    def _record(self, call: ToolCall, outcome: A.Outcome) -> None:
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
            args = A.parse_arguments(action, call.arguments)
            if isinstance(args, str):
                outcome = A.rejected(A.Reason.BAD_ARGUMENTS, args)
            else:
                try:
                    outcome = getattr(self, action.apply)(args)
                except MachineError as exc:  # a trigger not allowed here: the call was wrong
                    outcome = A.rejected(A.Reason.NOT_ALLOWED, str(exc))
        self._record(call, outcome)
        return int(outcome.applied)

    def match_business(self, args: A.MatchBusinessArgs) -> A.Outcome:
        business = self.ctl.catalog.get(args.business_id)
        if business is None:
            return A.rejected(A.Reason.UNKNOWN_BUSINESS,
                              f"unknown business {args.business_id!r}")
        if business.id in self.ctl.unavailable:
            self.parts.append(replies.render(replies.BUSINESS_UNAVAILABLE, name=business.name))
            self.asked = True
            return A.applied(A.Reason.UNAVAILABLE_BUSINESS, "not available online")
        s = self.s
        self._clear()
        s.business_id = business.id
        s.fields = {f.key: FieldState() for f in business.fields}
        s.flow_nonce = uuid.uuid4().hex
        self._fire("begin")
        self.parts.append(replies.render(replies.START, name=business.name))
        return A.applied()

    def answer_question(self, args: A.AnswerQuestionArgs) -> A.Outcome:
        question = args.question.strip()
        answer = self._knowledge(question) if question else None
        suggested = args.suggested_business_id
        if answer and answer.suggested_business_id and not suggested:
            suggested = answer.suggested_business_id
        can_suggest = suggested in self.ctl.catalog and self.s.state in ("idle", "done")
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
        elif self.business is not None and self.s.state not in ("idle", "done"):
            self.parts.append(replies.render(replies.CONTINUE, name=self.business.name))
        return A.applied()

    def _knowledge(self, question: str) -> Answer | None:
        key = ("answer", question)
        if key not in self.memo:
            self.memo[key] = self.ctl.knowledge.answer(question)
        return self.memo[key]

    def provide_field(self, args: A.ProvideFieldArgs) -> A.Outcome:
        business = self.business
        assert business is not None
        known = {k: v for k, v in args.values.items()
                 if k in business.field_keys and v is not None}
        if not known:
            return A.rejected(A.Reason.UNKNOWN_FIELD, f"unknown fields {sorted(args.values)}")
        outcome = self._set_fields(business, known)
        if self.s.state == "collecting" and not self._pending(business):
            self._complete()
        return outcome

    def _set_fields(self, business: Business, values: Mapping[str, Any]) -> A.Outcome:
        s = self.s
        recorded: list[str] = []
        problems: list[str] = []
        for key, raw in values.items():
            field = business.field(key)
            st = s.fields.setdefault(key, FieldState())
            res = validate_value(field.type, str(raw), **field.validator_options())
            produced = s.produced.get(key)
            if res.ok and produced is not None and produced["value"] != res.value:
                step = next((x for x in business.steps if x.id == produced["step"]), None)
                message = replies.render(replies.TYPED_MISMATCH, label=field.label,
                                         step=step.label if step else "")
                problems += self._mark_invalid(field, st, message, "")
            elif res.ok:
                st.value, st.status, st.error, st.attempts = res.value, "collected", None, 0
                recorded.append(key)
            else:
                problems += self._mark_invalid(field, st, res.error or "", field.error_msg or "")
        for chk in business.checks:
            if self._check_fails(chk):
                st = s.fields[chk.reask]
                st.value, st.status = None, "pending"
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
        bad = [k for k in values if s.fields[k].status != "collected"]
        return A.applied(detail=f"collected={recorded} invalid={bad}")

    def _mark_invalid(self, field: FieldDef, st: FieldState, diagnosis: str,
                      instruction: str) -> list[str]:
        """Count a failed attempt; the reply lines to show. A collected value is kept."""
        b = self.business
        assert b is not None
        st.attempts += 1
        st.error = diagnosis
        if st.status != "collected":
            st.status = "invalid"
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
        if not left or not right or left.status != "collected" or right.status != "collected":
            return False
        try:
            return not _OPS[chk.op](left.value, right.value)
        except TypeError:
            return True

    def _pending(self, business: Business) -> list[FieldDef]:
        return pending_fields(business, self.s.fields)

    def _complete(self) -> None:
        """The fields (or the steps) are in: the machine says what comes next."""
        self.s.awaiting = None
        self._fire("steps_done" if self.s.state == "step_executing" else "fields_done")
        if self.s.state == "confirming":
            self.s.awaiting = "confirm"
        elif self.s.state == "executing":
            self._queue_job()

    def cancel_flow(self, args: A.NoArgs) -> A.Outcome:
        b = self.business
        s = self.s
        if s.state in ("idle", "done"):
            self.parts.append(replies.NOTHING_TO_CANCEL)
            return A.applied(A.Reason.NOTHING_TO_CANCEL, "nothing to cancel")
        if s.state == "executing" and b is not None:
            job = self.ctl.jobs.load(s.job_id) if s.job_id else None
            if job is not None and not job.finished:
                self.parts.append(replies.render(replies.JOB_CANNOT_CANCEL, name=b.name))
                self.asked = True
                return A.applied(A.Reason.JOB_IN_PROGRESS, "a submitted job cannot be cancelled")
        self._fire("cancel")
        self._clear()
        self.parts.append(replies.render(replies.CANCELLED, name=b.name) if b
                          else replies.NOTHING_TO_CANCEL)
        self.asked = True
        return A.applied()

    def _clear(self) -> None:
        s = self.s
        s.business_id = None
        s.fields = {}
        s.awaiting = None
        s.step_attempts = 0
        s.step_data = {}
        s.produced = {}
        s.result = None
        s.flow_nonce = None
        s.retryable = True

    def confirm_submit(self, args: A.NoArgs) -> A.Outcome:
        self._fire("confirm")
        self._queue_job()
        return A.applied()

    def retry_submit(self, args: A.NoArgs) -> A.Outcome:
        if not self.s.retryable:
            return A.rejected(A.Reason.NOT_RETRYABLE, "the last failure cannot be retried")
        self._fire("retry")
        self._queue_job()
        return A.applied()

    def modify_info(self, args: A.ModifyInfoArgs) -> A.Outcome:
        b = self.business
        assert b is not None
        key = args.field_key
        if key not in b.field_keys:
            return A.rejected(A.Reason.UNKNOWN_FIELD, f"unknown field {key!r}")
        self._fire("fix" if self.s.state == "failed" else "modify")
        value = args.value
        st = self.s.fields.setdefault(key, FieldState())
        st.status = "pending"
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

    def redo_step(self, args: A.RedoStepArgs) -> A.Outcome:
        b = self.business
        assert b is not None
        step = next((st for st in b.steps if st.id == args.step_id), None)
        if step is None:
            return A.rejected(A.Reason.UNKNOWN_STEP, f"unknown step {args.step_id!r}")
        self._fire("redo")
        self._forget_step(step.id)
        self.parts.append(replies.render(replies.STEP_REDO_ASK, label=step.label))
        return A.applied()

    def _forget_step(self, step_id: str) -> None:
        s = self.s
        s.step_data.pop(step_id, None)
        s.produced = {k: v for k, v in s.produced.items() if v["step"] != step_id}
        s.step_attempts = 0

    def upload(self, args: A.UploadArgs) -> A.Outcome:
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
                                         if st.status == "collected"}),
                step_data=MappingProxyType(dict(self.s.step_data)),
            )
            self.memo[key] = handler.run(step, Upload(ref=args.file), context)
        result: StepResult = self.memo[key]
        s = self.s
        error = result.error or self._bad_produced(b, step, result)
        if error is not None:
            s.step_attempts += 1
            self.parts.append(replies.render(replies.STEP_FAILED, label=step.label,
                                             error=error or step.error_msg or ""))
            if s.step_attempts >= b.max_attempts:
                self.parts.append(replies.render(replies.ESCALATE, label=step.label,
                                                 attempts=s.step_attempts))
                s.step_attempts = 0
            return A.applied(A.Reason.STEP_FAILED, "step failed")
        s.step_data[step.id] = result.data
        s.step_attempts = 0
        self.parts.append(replies.render(replies.STEP_DONE, label=step.label))
        self._take_produced(b, step, result.fields)
        if self.step is None:
            self._complete()
        return A.applied(detail="step done")

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
            s.produced[key] = {"value": value, "step": step.id}
            st = s.fields.setdefault(key, FieldState())
            if st.status == "collected" and st.value != value:
                st.value, st.status = None, "invalid"
                st.error = replies.render(replies.STEP_MISMATCH, step=step.label, label=field.label)
                self.parts.append(st.error)
                self.reasked.add(key)
                s.awaiting = key
            else:
                st.value, st.status, st.error, st.attempts = value, "collected", None, 0
                recorded.append(key)
        if recorded:
            items = "、".join(f"{b.field(k).label} {display(b.field(k).type, s.fields[k].value)}"
                              for k in recorded)
            self.parts.append(replies.render(replies.RECORDED, items=items))

    # -- executing --------------------------------------------------------------

    def _values(self) -> dict[str, Any]:
        values = {k: st.value for k, st in self.s.fields.items() if st.status == "collected"}
        values.update(self.s.step_data)
        return values

    def _idempotency_key(self, business: Business, values: Mapping[str, Any]) -> str:
        payload = json.dumps([self.s.session_id, business.id, self.s.flow_nonce, values],
                             sort_keys=True, ensure_ascii=False, default=str)
        return hashlib.sha256(payload.encode()).hexdigest()[:32]

    def _queue_job(self) -> None:
        """Record the submission as a job; it runs after the session is saved."""
        b = self.business
        assert b is not None and self.s.state == "executing"
        values = json.loads(json.dumps(self._values(), ensure_ascii=False, default=str))
        long_running = self.ctl.executor_for(b).long_running
        # Recorded as claimed by this process, which runs it right after the save.
        self.job = Job(
            id=uuid.uuid4().hex, session_id=self.s.session_id, business_id=b.id,
            idempotency_key=self._idempotency_key(b, values), values=values,
            status="running", attempts=1, owner=this_process(),
            lease_until=time.time() + (LONG_LEASE if long_running else SYNC_LEASE),
            long_running=long_running,
        )
        self.s.job_id = self.job.id
        self.s.awaiting = None
        self.asked = True

    def apply_job(self, job: Job) -> None:
        """Apply a finished job's outcome: done with the result, or failed."""
        b = self.business
        assert b is not None
        if job.status == "succeeded":
            self._fire("succeed")
            result = job.result or {}
            self.s.result = result
            self.s.awaiting = None
            values = self._values()
            shown = {k: (display(b.field(k).type, v) if k in b.field_keys else v)
                     for k, v in values.items()}
            self.parts.append(replies.render(b.api.result_template, {**shown, **result}))
            self.asked = True
            return
        self._fire("fail")
        self._failed(b, job.error or JobError(message=replies.EXECUTOR_CRASHED))

    def _failed(self, b: Business, error: JobError) -> None:
        s = self.s
        field_errors = {k: v for k, v in error.field_errors.items() if k in b.field_keys}
        step_errors = {k: v for k, v in error.field_errors.items()
                       if k in {st.id for st in b.steps}}
        s.retryable = error.retryable and not (field_errors or step_errors)
        if step_errors:
            step_id, message = next(iter(step_errors.items()))
            self._fire("redo")
            self._forget_step(step_id)
            label = next(st.label for st in b.steps if st.id == step_id)
            self.parts.append(replies.render(replies.EXEC_STEP_FAILED, label=label,
                                             message=_sentence(message)))
            return
        if field_errors:
            self._fire("fix")
            for key, message in field_errors.items():
                st = s.fields.setdefault(key, FieldState())
                st.status, st.error = "failed", message
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
        if s.state in ("idle", "done"):
            examples = "、".join(
                b.name for b in list(self.ctl.catalog.values())[:4])
            self.parts.append(replies.render(replies.GREETING, examples=examples))
            self.asked = True
        elif s.state == "executing":
            return  # phase 2 says where the submission stands
        elif s.state == "failed" and not s.retryable:
            self.parts.append(replies.REFUSED_REASK)
            self.asked = True
        else:
            self.parts.append(replies.NOT_UNDERSTOOD)

    def prompt_next(self) -> None:
        """End the reply with what the dialogue needs next, unless already asked."""
        if self.asked:
            return
        s, b = self.s, self.business
        if b is None or s.state in ("idle", "done", "executing"):
            return
        if s.state == "collecting":
            pending = self._pending(b)
            if not pending:
                return
            pending_keys = [f.key for f in pending]
            first = s.awaiting if s.awaiting in pending_keys else pending_keys[0]
            s.awaiting = first
            ask = [b.field(first)] + [f for f in pending if f.key != first]
            self.parts.extend(f.prompt for f in ask[: max(1, b.ask.max_fields)]
                              if f.key not in self.reasked)
        elif s.state == "step_executing":
            step = self.step
            if step is not None:
                s.awaiting = step.id
                self.parts.append(step.prompt)
        elif s.state == "confirming":
            s.awaiting = "confirm"
            self.parts.append(self._confirm_text(b))
        elif s.state == "failed":
            s.awaiting = "retry" if s.retryable else None
            self.parts.append(replies.FAILED_REASK if s.retryable else replies.REFUSED_REASK)

    def _confirm_text(self, b: Business) -> str:
        lines = [
            replies.render(replies.SUMMARY_LINE, label=f.label,
                           value=display(f.type, self.s.fields[f.key].value))
            for f in b.fields if self.s.fields.get(f.key) and self.s.fields[f.key].value is not None
        ]
        lines += [
            replies.render(replies.SUMMARY_LINE, label=st.label, value=replies.STEP_SUMMARY_VALUE)
            for st in b.steps if st.id in self.s.step_data
        ]
        return replies.render(b.confirm_text or replies.DEFAULT_CONFIRM,
                              summary="\n".join(lines), name=b.name)


def _sentence(text: str) -> str:
    text = text.strip()
    return text if text.endswith(("。", "！", "？", ".")) else text + "。"
