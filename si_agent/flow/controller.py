"""The controller: runs one turn through the machine and owns the session and its jobs.

See ``core.machine`` for the turn lifecycle, ``core.actions`` for the action
table, ``flow.turn`` for what a turn does to the session (its handlers are in
``flow.handlers``) and ``flow.execution`` for running submissions. Every model or rule decision is
untrusted: a call whose tool the current state does not offer, or whose
arguments do not validate or name unknown businesses, fields or steps, is
rejected and recorded, never applied.

Execution is two-phase and durable::

    phase 1 (the turn, pure)      confirm → state executing and a job record with the
                                  idempotency key, written with the session in one
                                  atomic compare-and-set
    phase 2 (after the save)      the executor runs once (flow.execution)
    outcome (small transaction)   the job's outcome and its application to the
                                  session, again in one atomic write

A save conflict re-applies the same decision to the fresh session: the model,
the knowledge base and step handlers are not called again, no executor has
run yet, and no job was written.
"""

from __future__ import annotations

import logging
import secrets
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from si_agent import replies
from si_agent.audit import AuditLog, MemoryAuditStore
from si_agent.config.assistant import AssistantTexts
from si_agent.config.model import Business, Step
from si_agent.config.settings import DEFAULT_HANDOFF
from si_agent.core import actions as A
from si_agent.core import consult
from si_agent.core.catalog import Catalog
from si_agent.core.decision import (
    SURE,
    Decision,
    IntentEngine,
    Rule,
    TextSink,
    ToolCall,
    ValuesWithRequest,
)
from si_agent.core.machine import DialogueMachine
from si_agent.core.state import AT_REST, State
from si_agent.errors import JobInProgress, NoStepAwaited, SessionConflict
from si_agent.executor import Executors
from si_agent.executor.base import Executor
from si_agent.flow import handoff as hand_off
from si_agent.flow import readback
from si_agent.flow.deps import TurnDeps
from si_agent.flow.effects import Effects, Moderated, carry_out
from si_agent.flow.execution import JobDriver
from si_agent.flow.result import TurnResult, snapshot
from si_agent.flow.steps import (
    StepHandler,
    Upload,
    registered_step_handlers,
    unavailable_businesses,
    without_unavailable_steps,
)
from si_agent.flow.turn import Turn
from si_agent.handoff import Desk, create_ticket_store
from si_agent.jobs import JobError, JobRunner, JobStore, ThreadRunner, create_job_store
from si_agent.knowledge import Knowledge, NoKnowledge, behind, knows_nothing
from si_agent.moderation import Moderation
from si_agent.privacy import redact_text
from si_agent.requirements import Missing
from si_agent.session.base import ExpiryMarks, SessionStore, session_ref
from si_agent.session.files import StepFiles, create_step_files
from si_agent.session.model import Session, Shown
from si_agent.turns import MemoryTurnStore, TurnFacts, TurnLog
from si_agent.uploads import CleanImage
from si_agent.validators import relative_dates

UPLOAD_TEXT = replies.UPLOAD_HISTORY  # what the history says the citizen sent: never the image

log = logging.getLogger(__name__)

_MAX_CONFLICT_RETRIES = 5

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
        files: StepFiles | None = None,
        jobs: JobStore | None = None,
        runner: JobRunner | None = None,
        max_message_chars: int = 2000,
        texts: AssistantTexts | None = None,
        handoff_text: str = DEFAULT_HANDOFF,
        audit: AuditLog | None = None,
        moderation: Moderation | None = None,
        turns: TurnLog | None = None,
        handoff: Desk | None = None,
    ) -> None:
        self.store = store
        self.engine = engine
        # Who reads values stated with a request once a form's fields are known.
        self.values_with_request = engine if isinstance(engine, ValuesWithRequest) else None
        self.executor = executor
        self.knowledge = knowledge or NoKnowledge()
        self.step_handlers = dict(
            registered_step_handlers() if step_handlers is None else step_handlers
        )
        # The one catalog: the engines built from the same ``Catalog`` read this object.
        self.catalog = catalog if isinstance(catalog, Catalog) else Catalog(catalog)
        for kept in without_unavailable_steps(self.catalog, self.step_handlers).values():
            if kept is not self.catalog[kept.id]:
                self.catalog.replace(kept)
        self.files = files if files is not None else create_step_files(store)
        self.jobs = jobs if jobs is not None else create_job_store(store)
        self.runner = runner or ThreadRunner()
        # Without one given (tests, embedding code): this process's memory only.
        self.audit = audit or AuditLog(MemoryAuditStore(), pepper=secrets.token_hex(16))
        # The turn-event record (review, feedback, analytics); by default in memory.
        self.turns = turns or TurnLog(MemoryTurnStore(), self.audit)
        self.driver = JobDriver(self)
        self.max_message_chars = max_message_chars
        self.texts = texts if texts is not None else AssistantTexts()
        self.handoff_text = handoff_text
        # Without one given (tests, embedding code): none; build_controller gives the
        # deployment's (the word list by default).
        self.moderation = moderation or Moderation()
        # The hand-off queue, its tickets next to the sessions (build_controller gives
        # the deployment's hours and capacity).
        self.handoff = handoff if handoff is not None else Desk(create_ticket_store(store))
        self.machine = DialogueMachine()
        self.unavailable = unavailable_businesses(self.catalog, self.step_handlers)
        for bid, names in self.unavailable.items():
            log.warning("business %s is not available online: step handler(s) %s not "
                        "registered on this deployment", bid, ", ".join(names))
        self._check_requirements()
        self._locks = SessionLocks()
        self._toolsets: dict[tuple, list[dict]] = {}
        self._toolsets_version = self.catalog.version

    def _check_requirements(self) -> None:
        """Each executor's requirements, checked once at start: one warning line per
        missing thing (with the businesses needing it and the fix); a business whose
        executor cannot run here is not available online (citizens are told so
        before they start, not offered a retry that cannot help)."""
        needing: dict[Missing, list[str]] = {}
        for bid, missing in self.executor.missing(self.catalog.values()).items():
            for m in missing:
                needing.setdefault(m, []).append(bid)
                if m.blocking:
                    self.unavailable = {**self.unavailable,
                                        bid: [*self.unavailable.get(bid, []), m.what]}
        for m, bids in needing.items():
            log.warning("%s%s (needed by %s): %s", m.what,
                        "; those businesses are not available online" if m.blocking else "",
                        ", ".join(bids), m.fix)

    # -- public API -------------------------------------------------------

    def handle(
        self, session_id: str, message: str, on_delta: TextSink | None = None, *,
        group_id: str | None = None, spoken: bool = False,
    ) -> TurnResult:
        """Run one user turn and return the turn object.

        ``on_delta`` receives a model's free-text answer as it is generated,
        when there is no knowledge base to answer instead; the reply then
        starts with exactly that text. ``group_id`` names the conversation whose
        consultation profile to keep or take up again (the session id by default).
        ``spoken``: the message is a transcript (``POST /api/voice``); long numbers in it
        are read back before they are stored (``flow.readback``).
        """
        text = (message or "").strip()
        if not text or len(text) > self.max_message_chars:
            session = self.load(session_id)
            reply = (
                replies.EMPTY_MESSAGE if not text
                else replies.render(replies.TOO_LONG, limit=self.max_message_chars)
            )
            return snapshot(session, self.catalog, reply)
        verdict = self.moderation.check(text, "input")
        marks = [] if verdict.clean else [("input", verdict.action.value, verdict.categories)]
        if not verdict.clean:
            session = self.load(session_id)
            business = self.catalog.get(session.business_id) if session.business_id else None
            effects = Effects(moderated=[Moderated("input", verdict.action.value,
                                                   verdict.categories, business)])
            carry_out(effects, session_id, self.files, self.audit)
            if verdict.refused:  # not used: nothing of it is stored (but a person holding
                # the session's ticket is told that a message came, and the page follows on;
                # the review lists it, after the turn before: no turn ran)
                self.turns.moderated(session.session_id, session.started_at, session.turn,
                                     marks)
                reply = verdict.reply or replies.INPUT_REFUSED
                ticket = hand_off.refused_note(self.handoff, session.handoff, text, verdict,
                                               self.moderation.labels, reply)
                return snapshot(session, self.catalog, reply).model_copy(
                    update={"handoff": hand_off.view(ticket)})
            text = verdict.text
        if on_delta is not None and self.moderation.active:
            on_delta = self.moderation.stream(on_delta)
        return self._turn(session_id, text, lambda turn: self._decide(turn, on_delta),
                          group_id=group_id, spoken=spoken, routable=True,
                          marks=marks)

    def _handed(self, session: Session, text: str, routed: hand_off.Routed) -> TurnResult:
        """The turn object of a message the hand-off took (``flow.handoff.route``); a
        hand-off that ended joins the history (the caller saves the session then)."""
        reply = routed.reply or ""
        if reply:
            business = self.catalog.get(session.business_id) if session.business_id else None
            reply += replies.render(replies.CONTINUE, name=business.name) if (
                business is not None and session.state not in AT_REST) else replies.ANYTHING_ELSE
            session.show("user", redact_text(text))
            session.show("assistant", reply)
        ticket = routed.ticket if routed.ticket is not None and routed.ticket.open else None
        return snapshot(session, self.catalog, reply).model_copy(update={
            "message": redact_text(text), "handoff": hand_off.view(ticket, routed.seq)})

    def _decide(self, turn: Turn, on_delta: TextSink | None) -> Decision:
        """The engine's decision for the turn's message (the one engine call of a turn);
        none for a yes or no to numbers read back (the turn settles those)."""
        if turn.s.heard and readback.answer(turn.text) is not None:
            return Decision(calls=[], rule=Rule.READ_BACK, confidence=SURE, engine="read_back",
                            reason="an answer to numbers read back")
        # A model's free text is the answer only without a knowledge base; it is not
        # streamed when curated answers may answer instead.
        stream = on_delta if knows_nothing(self.knowledge) else None
        return self.engine.decide(turn.view(), turn.text, turn.tools(), stream)

    def upload(self, session_id: str, image: CleanImage, step_id: str | None = None) -> TurnResult:
        """Apply a checked photo to the step being awaited; the turn object.

        Raises ``NoStepAwaited`` (the session is unchanged) when no step, or not
        ``step_id``, waits for an upload. The photo goes to the step handler only:
        never to a model, never to a log.
        """
        upload = Upload(ref=f"upload:{image.digest[:16]}", data=image.data,
                        media_type=image.media_type)

        def decide(turn: Turn) -> Decision:
            step = turn.step
            if step is None or (step_id is not None and step_id != step.id):
                raise NoStepAwaited(session_ref(session_id), step_id)
            turn.uploads[upload.ref] = upload
            calls = [ToolCall(name=A.step_tool_name(step), arguments={"file": upload.ref})]
            if turn.s.state != State.STEP_EXECUTING:  # an optional step, taken up now
                calls.insert(0, ToolCall(name=A.REDO_STEP, arguments={"step_id": step.id}))
            return Decision(calls=calls, rule=Rule.UPLOAD, confidence=SURE, engine="upload",
                            reason="a photo uploaded for the step")

        # An upload to an expired session is refused (no step awaits it) and saves
        # nothing: the expiry notice is left for the next message.
        return self._turn(session_id, UPLOAD_TEXT, decide, always_decide=True,
                          tell_expiry=False)

    def on_behalf(self, session_id: str, business: Business, field_key: str,
                  value: str) -> TurnResult:
        """A value a staff member holding the session's hand-off ticket gives for the
        citizen (``POST /console/handoff/<number>/field``): applied as the citizen's own
        answer would be (the field's validator, what is asked next), in a turn of its own
        whose history line names the field, never the value. The caller checked that the
        session is collecting ``business`` and that ``value`` validates."""
        label = business.field(field_key).label

        def decide(turn: Turn) -> Decision:
            return Decision(
                calls=[ToolCall(name=A.PROVIDE_FIELD,
                                arguments={"values": {field_key: value}})],
                rule=Rule.STAFF, confidence=SURE, engine="staff",
                reason="a value a staff member set in a hand-off")

        return self._turn(session_id, replies.render(replies.STAFF_HISTORY, label=label),
                          decide, always_decide=True, tell_expiry=False, channel="staff")

    def _turn(self, session_id: str, text: str, decide: Callable[[Turn], Decision], *,
              always_decide: bool = False, group_id: str | None = None,
              tell_expiry: bool = True, spoken: bool = False,
              routable: bool = False, channel: str | None = None,
              marks: list[tuple[str, str, tuple[str, ...]]] | None = None) -> TurnResult:
        started = time.monotonic()
        # One parse budget for everything the turn reads (validators.relative_dates).
        with self._locks.hold(session_id), relative_dates.one_message():
            memo: dict[tuple, Any] = {}  # knowledge answers and step results, across re-runs
            decision: Decision | None = None
            for _ in range(_MAX_CONFLICT_RETRIES):
                session = self.load(session_id, tell_expiry=tell_expiry)
                if routable and (session.handoff or hand_off.LEAVE.fullmatch(text)):
                    # The hand-off's part (its desk writes once: memoised for re-runs).
                    if ("handoff-route",) not in memo:
                        memo[("handoff-route",)] = hand_off.route(self.handoff, session.handoff, text)
                    routed = memo[("handoff-route",)]
                    if routed.clear:
                        session.handoff = None
                    if routed.reply is not None:  # not the engine's: a person, or the end
                        handed = self._handed(session, text, routed)
                        if routed.clear or routed.reply:
                            try:
                                self.store.save(session)
                            except SessionConflict:
                                continue
                        if marks:  # a message to the person, masked or flagged: reviewed too
                            self.turns.moderated(session.session_id, session.started_at,
                                                 session.turn, marks)
                        return handed
                turn = Turn(session, self.deps, text=text, memo=memo, spoken=spoken)
                turn.prepare(group_id)
                if decision is None or always_decide:
                    decision = decide(turn)
                before = (session.business_id,
                          {k: v.model_copy() for k, v in session.fields.items()})
                result = turn.run(decision)
                try:  # with a submission, its job record in the same atomic write
                    self.store.save(session, job=turn.effects.job)
                except SessionConflict:
                    log.info("session %s changed concurrently; applying the decision again",
                             session_ref(session_id))
                    continue
                carry_out(turn.effects, session_id, self.files, self.audit)
                break
            else:
                raise SessionConflict(session_ref(session_id), expected=-1, found=None)
            if turn.effects.handoff is not None:  # after the save, with the context it holds
                business = self.catalog.get(session.business_id) if session.business_id else None
                ticket = hand_off.open_ticket(self.handoff, session, business,
                                              turn.effects.handoff)
                result = result.model_copy(update={"handoff": hand_off.view(ticket)})
            elif session.handoff:  # waiting: the page keeps following it
                result = result.model_copy(update={
                    "handoff": hand_off.view(self.handoff.store.load(session.handoff))})
            if session.state == State.EXECUTING and session.job_id:
                result = self.driver.drive(session, result, turn.effects.job)
            assert decision is not None
            self._record_turn(session, turn, decision, before, result, started,
                              channel or ("upload" if always_decide else "voice" if spoken
                                          else "text"))
            marks = [*(marks or ()), *((m.where, m.action, m.categories)
                                       for m in turn.effects.moderated)]
            if marks:  # the input's (masked or flagged) and the reply's
                self.turns.moderated(session.session_id, session.started_at, result.turn,
                                     marks)
            return result

    def _record_turn(self, session: Session, turn: Turn, decision: Decision,
                     before: tuple, result: TurnResult, started: float, channel: Any) -> None:
        """The turn-event record of a saved turn (``si_agent.turns``; masked there):
        ``before`` is the business id and the fields the turn began with."""
        business_before, fields_before = before
        job = turn.effects.applied or turn.effects.job
        if job is not None and result.job is not None and job.id == result.job.id:
            # As the turn left it (a submission run in the turn): no store read for it.
            failed = result.job.status == "failed" and job.error is None
            job = job.model_copy(update={
                "status": result.job.status, "result": result.result or job.result,
                # why is in the reply; whether retrying may help is the session's
                "error": JobError(message="", retryable=session.retryable) if failed
                else job.error})
        self.turns.turn(TurnFacts(
            session_id=session.session_id, started_at=session.started_at, turn=result.turn,
            text=turn.text, reply=result.reply, state_before=str(turn.state_before),
            state_after=str(result.state),
            business=self.catalog.get(result.business.id if result.business
                                      else business_before or ""),
            awaiting=result.awaiting,
            engine=decision.engine or self.engine.name, rule=decision.rule.value,
            confidence=decision.confidence, calls=turn.st.records, before=fields_before,
            after=session.fields,
            questions=[(key[1], answer) for key, answer in turn.memo.items()
                       if key[0] == "answer"],
            job=job, latency_ms=round((time.monotonic() - started) * 1000),
            usage=decision.usage, channel=channel))

    @property
    def deps(self) -> TurnDeps:
        """What a turn reads besides its session (built per turn: cheap, and it follows
        attributes replaced after construction, as tests do)."""
        return TurnDeps(
            catalog=self.catalog, machine=self.machine, texts=self.texts,
            handoff_text=self.handoff_text, unavailable=self.unavailable, files=self.files,
            jobs=self.jobs, discoverer=self, knowledge=self.knowledge,
            model_text_answers=isinstance(behind(self.knowledge), NoKnowledge), toolsets=self,
            step_handlers=self.step_handlers, job_kinds=self, lease=self.driver.lease,
            engine_name=self.engine.name, values_with_request=self.values_with_request,
            moderation=self.moderation, handoff=self.handoff)

    def long_running(self, business: Business) -> bool:
        """Whether ``business``'s executor runs long (its job goes to the runner)."""
        return self.executor_for(business).long_running

    def discovered(self, business: Business) -> Business:
        """``business`` (``fields: discover``) with its form's fields, which this
        controller's catalog keeps from now on. Raises ``ExecutorError``."""
        ready = self.executor.prepare(business)
        if ready != self.catalog.get(business.id):
            self.catalog.replace(ready)
        return ready

    def ready(self, business: Business) -> Business:
        """``business`` with its fields (read from its form first, if it discovers them)."""
        return self.discovered(business) if business.discover and not business.fields \
            else business

    def toolset(self, state: str, business: Business | None, step: Step | None,
                retryable: bool = True) -> list[dict]:
        """The tools ``state`` offers (built once per state, business, step and retryability)."""
        if self._toolsets_version != self.catalog.version:  # discovery changed a business
            self._toolsets, self._toolsets_version = {}, self.catalog.version
        key = (state, business.id if business else None, step.id if step else None, retryable)
        tools = self._toolsets.get(key)
        if tools is None:
            tools = self._toolsets[key] = A.toolset(state, business, step, self.catalog,
                                                    retryable=retryable)
        return tools

    def current(self, session_id: str) -> TurnResult:
        """The turn object for the stored session, without a reply.

        A job that finished since the last turn is applied first (its text is
        the ``notice``); one whose process died is resumed in the background.
        """
        session = self.load(session_id)
        job = self.jobs.load(session.job_id) if session.job_id else None
        if session.state == State.EXECUTING and job is not None:
            if job.finished:
                session, _ = self.driver.apply_outcome(session_id, job, same_turn=False)
            else:
                self.driver.reconcile(session)
        ticket = self.handoff.store.load(session.handoff) if session.handoff else None
        return snapshot(session, self.catalog, job=job).model_copy(
            update={"handoff": hand_off.view(ticket if ticket and ticket.open else None)})

    def transcript(self, session_id: str) -> list[Shown]:
        """The recent messages as the page showed them (citizens' numbers masked), oldest
        first: what a page loaded again shows. Reads only; empty without a session."""
        session = self.store.load(session_id)
        return list(session.transcript) if session is not None else []

    def reset(self, session_id: str) -> TurnResult:
        """Forget the session: the user starts again in idle.

        Refused (``JobInProgress``) while a submission is being processed: its
        outcome would have nowhere to go.
        """
        session = self.store.load(session_id)
        if session is not None and session.state == State.EXECUTING and session.job_id:
            job = self.jobs.load(session.job_id)
            if job is not None and not job.finished:
                raise JobInProgress(session_ref(session_id), job.id)
        ticket = self.handoff.store.load(session.handoff) if session and session.handoff else None
        if ticket is not None and ticket.open:  # starting over leaves the hand-off queue too
            self.handoff.citizen_leaves(ticket.number)
        if session is not None:  # the photos of its flows go with it, and its profiles
            for nonce in {session.flow_nonce, *(f.flow_nonce for f in session.suspended)}:
                if nonce:
                    self.files.drop(f"{session_id}:{nonce}")
            self.files.drop(consult.profile_owner(session_id, session.group_id))
        self.store.delete(session_id)
        return snapshot(Session(session_id=session_id), self.catalog)

    def watch(self, session_id: str, *, timeout: float = 120.0, interval: float = 0.25,
              stop: threading.Event | None = None,
              follows: str | None = None) -> Iterator[TurnResult]:
        """Turn objects as a running job reports progress, ending with its outcome.

        Stops when the session is no longer executing (the last object carries
        the outcome as ``notice``, which counts as delivered and is cleared), or
        after ``timeout``. An outcome another stream delivered first (a page
        reloaded while its old stream was still open on the server) is told again
        to this one, when it followed that job.
        ``timeout`` 0: the state as it is now, once (a poll);
        ``stop`` set: ends at once (a newer stream of the session took over);
        ``follows``: the job the caller saw (a page loaded again, shown the outcome as
        the session's notice, whose old stream may deliver it first).
        """
        deadline = time.monotonic() + timeout
        last: tuple | None = None
        followed = follows  # the job this stream (or its caller) saw
        while True:
            turn = self.current(session_id)
            if turn.state != State.EXECUTING:
                if turn.notice:
                    self._deliver_notice(session_id, turn.notice)
                elif followed is not None:
                    told = self.driver.told_elsewhere(session_id, followed)
                    if told:
                        turn = turn.model_copy(update={"notice": told})
                yield turn
                return
            if turn.job is not None:
                followed = turn.job.id
            mark = (turn.job.status, turn.job.progress) if turn.job else None
            if mark != last:
                last = mark
                yield turn
            if time.monotonic() >= deadline:
                return
            if stop is None:
                time.sleep(interval)
            elif stop.wait(interval):
                return

    def _deliver_notice(self, session_id: str, notice: str) -> None:
        """The notice was shown (on the event stream): it joins the history, once."""
        for _ in range(_MAX_CONFLICT_RETRIES):
            session = self.load(session_id)
            if session.notice != notice:
                return
            session.notice = None
            session.remember("assistant", notice)
            session.show("assistant", notice)
            try:
                self.store.save(session)
                return
            except SessionConflict:
                continue

    # -- sessions and executors ----------------------------------------------------

    def load(self, session_id: str, *, tell_expiry: bool = False) -> Session:
        """The stored session, or a fresh one in idle.

        With ``tell_expiry`` (a turn), a fresh session that replaces an expired one
        carries ``replies.SESSION_EXPIRED`` as its notice, so the reply starts with it
        (the store's expiry mark is used up: see ``si_agent.session.base``).
        """
        session = self.store.load(session_id)
        if session is None:
            session = Session(session_id=session_id)
            if (tell_expiry and isinstance(self.store, ExpiryMarks)  # declared by the store
                    and self.store.expired(session_id)):
                session.notice = replies.SESSION_EXPIRED
        return session

    def executor_for(self, business: Business) -> Executor:
        return self.executor.get(business)
