"""Phase 2 of a turn: run a recorded job once, and apply its outcome to the session.

::

    the turn recorded the job (running, owned by this process) and saved the session
        │
        ├─ long-running executor → the job runner; the reply says "已提交，正在办理…"
        └─ otherwise → run here, under a heartbeat that keeps the job's lease fresh
              │
              ▼
    finish the job (compare-and-set; a recorded result is never overwritten)
              │
              ▼
    apply the outcome to the session: a small transaction of its own, re-run on a
    conflict (pure code); the outcome's text ends the reply, or waits as ``notice``

A job whose process died (its owner is gone, or its lease ran out) is claimed
by the next turn, ``GET /api/session`` or the event stream: re-run with the same
idempotency key if its executor is resumable, otherwise finished as "outcome
unknown". A job is never run by two processes at once: every claim is a
compare-and-set on the job record.
"""

from __future__ import annotations

import base64
import logging
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from si_agent import replies
from si_agent.config.model import Business
from si_agent.config.settings import DEFAULT_TAKEOVER_GRACE
from si_agent.core.state import State
from si_agent.errors import ExecutorError, JobConflict, SessionConflict
from si_agent.executor.base import JobContext
from si_agent.flow.closing import prompt_next
from si_agent.flow.deps import JobHost
from si_agent.flow.effects import carry_out
from si_agent.flow.moves import Flow, join
from si_agent.flow.outcomes import apply_job, outcome_text
from si_agent.flow.result import TurnResult, job_view, snapshot
from si_agent.flow.steps import FILE_REF
from si_agent.jobs import Job, JobError
from si_agent.jobs.model import this_process
from si_agent.session.base import session_ref
from si_agent.session.model import Session

log = logging.getLogger(__name__)

LEASE = 60.0  # a job whose owner has not renewed its lease for this long is stale
HEARTBEAT = 20.0  # how often a running job renews its lease
MAX_ATTEMPTS = 3  # a job whose process keeps dying is not run a fourth time
_RETRIES = 5


class JobDriver:
    """Runs, resumes and settles the jobs of one controller's sessions."""

    def __init__(self, ctl: JobHost) -> None:
        self.ctl = ctl
        self.lease = LEASE
        self.heartbeat = HEARTBEAT
        self.takeover_grace = DEFAULT_TAKEOVER_GRACE  # SI_JOB_TAKEOVER_GRACE
        self._running: set[str] = set()  # jobs this process is running now
        self._versions: dict[str, int] = {}  # their record versions, as last written here
        self._resumes: dict[str, dict] = {}  # resume states they recorded while running
        self._running_lock = threading.Lock()
        self._beater: threading.Thread | None = None

    # -- after a turn ----------------------------------------------------------

    def drive(self, session: Session, result: TurnResult, recorded: Job | None) -> TurnResult:
        """Run, resume or report the session's job; the turn's reply gains its part.

        ``recorded`` is the job this turn wrote, already claimed by this process;
        any other unfinished job is claimed first (if its process died), or
        reported as running elsewhere.
        """
        ctl = self.ctl
        job = recorded if recorded is not None else ctl.jobs.load(session.job_id or "")
        business = ctl.catalog.get(session.business_id or "")
        if job is None or business is None:
            return result
        if not job.finished and recorded is None:
            claimed = self.claim(job, business)
            if claimed is None:
                running = _running_text(business, job)
                self._show_more(session.session_id, running)
                return _amend(result, running, job=job)
            job = claimed
        if not job.finished:
            if job.long_running:
                # "已提交，正在办理" only once the runner took the job: one it refused
                # (its queue down, the pool shut down) never started, and says so.
                try:
                    ctl.runner.submit(job.id, self.run_in_background)
                except Exception:  # any runner's failure (a Protocol: Celery, threads)
                    log.exception("job %s for %s: the job runner did not take it; "
                                  "not started", job.id, business.id)
                    job = self.finish(job, error=JobError(message=replies.JOB_NOT_STARTED,
                                                             retryable=True))
                else:
                    queued = [replies.render(replies.JOB_QUEUED, name=business.name)]
                    self._show_more(session.session_id, queued)
                    return _amend(result, queued, job=job)
            else:
                job = self.execute(job, business)
        session, parts = self.apply_outcome(session.session_id, job, same_turn=True,
                                            session=session)
        final = snapshot(session, ctl.catalog, job=job, turn_usage=result.usage.get("turn"))
        return final.model_copy(update={"reply": join([result.reply, *parts]),
                                        "message": result.message})

    def _show_more(self, session_id: str, parts: list[str]) -> None:
        """The turn's reply gained ``parts`` after its save: the transcript gains them too."""
        for _ in range(_RETRIES):
            session = self.ctl.load(session_id)
            session.show_more(join(parts))
            try:
                self.ctl.store.save(session)
                return
            except SessionConflict:
                continue
        log.warning("transcript of %s not amended (changed concurrently)", session_ref(session_id))

    def reconcile(self, session: Session) -> None:
        """Outside a turn (a read, the event stream): resume a job whose process died."""
        job = self.ctl.jobs.load(session.job_id or "")
        business = self.ctl.catalog.get(session.business_id or "")
        if job is None or business is None or job.finished or not self._stale(job):
            return
        claimed = self.claim(job, business)
        if claimed is not None and not claimed.finished:
            self.ctl.runner.submit(claimed.id, self.run_in_background)

    # -- claiming and running ------------------------------------------------------

    def claim(self, job: Job, business: Business) -> Job | None:
        """Take an unfinished job of another turn; None if it is not ours to run.

        Only a stale job is taken. A running one runs again only if its executor
        is resumable; otherwise it is finished here as "outcome unknown".
        """
        if not self._stale(job):
            return None
        if job.attempts >= MAX_ATTEMPTS:
            log.error("job %s of %s: its process died %d times; not run again",
                      job.id, business.id, job.attempts)
            return self.finish(job, error=JobError(
                message=replies.render(replies.JOB_UNKNOWN, name=business.name,
                                               handoff=self.ctl.deps.handoff_text),
                retryable=False, unknown=True))
        if job.status == "running" and not self.ctl.executor_for(business).resumable:
            log.warning("job %s of %s: its process died mid-run and the executor is not "
                        "resumable; reporting the outcome as unknown", job.id, business.id)
            return self.finish(job, error=JobError(
                message=replies.render(replies.JOB_UNKNOWN, name=business.name,
                                               handoff=self.ctl.deps.handoff_text),
                retryable=False, unknown=True))
        if job.status == "running":
            log.warning("job %s of %s: its process died mid-run; resuming with the same "
                        "idempotency key", job.id, business.id)
        # The dead attempt's progress text is not this attempt's: cleared, not shown again.
        claimed = job.model_copy(update={"status": "running", "owner": this_process(),
                                         "attempts": job.attempts + 1, "progress": None,
                                         "lease_until": time.time() + self.lease,
                                         "owner_gone_at": None})
        try:
            self.ctl.jobs.save(claimed)
        except JobConflict:
            return None
        return claimed

    def execute(self, job: Job, business: Business) -> Job:
        """Run the claimed job's executor once; the finished job, not yet written
        (``apply_outcome`` writes it together with the session it changes)."""
        executor = self.ctl.executor_for(business)
        business = self.ctl.ready(business)  # fields: discover: the form's fields
        values, gone = self._with_files(job.values)
        if gone:  # kept longer than the session: that step again
            log.warning("job %s of %s: kept file(s) of %s gone", job.id, business.id,
                        ", ".join(gone))
            return self._outcome(job, error=JobError(
                message=replies.STEP_FILE_GONE, retryable=False,
                field_errors={step_id: replies.STEP_FILE_GONE for step_id in gone}))
        with self._heartbeat(job):
            try:
                result = self.ctl.executor.run(
                    business, values, idempotency_key=job.idempotency_key,
                    progress=lambda text: self._renew(job.id, progress=text),
                    job=JobContext(id=job.id, resume=job.resume or {}, attempt=job.attempts,
                                   remember=lambda state: self._renew(job.id, resume=state)))
            except ExecutorError as exc:
                error = JobError(message=exc.message, field_errors=exc.field_errors,
                                 retryable=exc.retryable and not exc.unknown,
                                 status=exc.status, resume=exc.resume, unknown=exc.unknown)
                self._audit(job, business, error=exc.message)
                return self._outcome(job, error=error)
            except Exception as exc:  # a broken executor must not break the dialogue
                # Only the type: third-party messages may quote the values sent.
                log.error("job %s of %s: the executor crashed (%s)", job.id, business.id,
                          type(exc).__name__)
                self._audit(job, business, error=f"executor crashed: {type(exc).__name__}")
                return self._outcome(job, error=JobError(
                    message=replies.EXECUTOR_CRASHED, retryable=executor.resumable))
        self._audit(job, business, result=result)
        return self._outcome(job, result=result)

    def _audit(self, job: Job, business: Business, *, result: dict | None = None,
               error: str | None = None) -> None:
        """The audit log's entry for this run of the executor (every kind: http, rpa, ...)."""
        channel = business.api.kind if business.api else "none"
        self.ctl.audit.submission(job, business, channel=channel, result=result, error=error)

    def _with_files(self, values: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
        """``values`` with each kept-file reference replaced by the file (base64), and
        the steps whose files are gone."""
        out, gone = dict(values), []
        for step_id, data in values.items():
            if not isinstance(data, dict):
                continue
            for name, ref in data.items():
                if isinstance(ref, dict) and FILE_REF in ref:
                    content = self.ctl.files.get(ref["owner"], ref[FILE_REF])
                    if content is None:
                        gone.append(step_id)
                        continue
                    out[step_id] = {**out[step_id], name: base64.b64encode(content).decode()}
        return out, gone

    def _outcome(self, job: Job, *, result: dict | None = None,
                 error: JobError | None = None) -> Job:
        """The job finished, at its stored version (lease renewals moved it on); the
        values are dropped (the session keeps them)."""
        with self._running_lock:
            version = self._versions.pop(job.id, None)
            resume = self._resumes.pop(job.id, job.resume)
        fresh = job.model_copy(update={"version": version}) if version else job
        return fresh.model_copy(update={
            "status": "failed" if error else "succeeded", "result": result, "error": error,
            "finished_at": time.time(), "progress": None, "values": {}, "resume": resume})

    def run_in_background(self, job_id: str) -> None:
        """The job runner's entry: run a claimed job and apply its outcome as a notice."""
        ctl = self.ctl
        job = ctl.jobs.load(job_id)
        business = ctl.catalog.get(job.business_id) if job else None
        if job is None or business is None or job.status != "running":
            return
        job = self.execute(job, business)
        self.apply_outcome(job.session_id, job, same_turn=False)

    def run_handed_over(self, job_id: str, handed_by: str) -> bool:
        """A job queue worker's entry: take the job ``handed_by`` (the process that
        queued it) passed on, or one whose process died, and run it. False when
        another live process holds it (the queue should try again after a lease)."""
        ctl = self.ctl
        job = ctl.jobs.load(job_id)
        business = ctl.catalog.get(job.business_id) if job else None
        if job is None or business is None or job.finished:
            return True
        if job.owner == handed_by and not job.stale():
            taken = job.model_copy(update={"owner": this_process(),
                                           "lease_until": time.time() + self.lease})
            try:
                ctl.jobs.save(taken)
            except JobConflict:
                return False
        elif self._stale(job):
            claimed = self.claim(job, business)
            if claimed is None:
                return False
            taken = claimed
        else:
            return job.owner == this_process()  # a redelivery of a job running here
        if not taken.finished:
            taken = self.execute(taken, business)
        self.apply_outcome(taken.session_id, taken, same_turn=False)
        return True

    def _stale(self, job: Job) -> bool:
        """Whether ``job`` may be taken over now. The first time its process is found
        dead, that moment is recorded on the job: the grace counts from it."""
        if job.stale(grace=self.takeover_grace):
            return True
        marked = job.seen_gone()
        if marked is not None:
            try:
                self.ctl.jobs.save(marked)
            except JobConflict:
                pass  # someone else wrote it (marked it, or it moved on): read again later
            else:
                log.warning("job %s: its process %s is gone; taken over in %.0f s",
                            job.id, job.owner, self.takeover_grace)
        return False

    def finish(self, job: Job, *, result: dict | None = None,
               error: JobError | None = None) -> Job:
        """Record an outcome on the job alone (no session to apply it to here)."""
        return self._record(self._outcome(job, result=result, error=error))

    def _record(self, done: Job) -> Job:
        """Write a finished job; if it was finished meanwhile (taken over as stale),
        the recorded outcome stays and both are logged."""
        for _ in range(_RETRIES):
            try:
                self.ctl.jobs.save(done)
                return done
            except JobConflict:
                fresh = self.ctl.jobs.load(done.id)
                if fresh is None:
                    raise
                if fresh.finished:
                    log.error("job %s finished twice: kept %s, dropped %s (a lease ran out "
                              "while it ran)", done.id, fresh.status, done.status)
                    return fresh
                done = done.model_copy(update={"version": fresh.version})
        raise JobConflict(done.id, done.version, None)

    @contextmanager
    def _heartbeat(self, job: Job) -> Iterator[None]:
        """Keep the job's lease fresh while it runs: one shared thread renews every
        job this process is running (no thread per job)."""
        with self._running_lock:
            self._running.add(job.id)
            self._versions[job.id] = job.version
            if self._beater is None or not self._beater.is_alive():
                self._beater = threading.Thread(target=self._beat, name="si-job-leases",
                                                daemon=True)
                self._beater.start()
        try:
            yield
        finally:
            with self._running_lock:
                self._running.discard(job.id)

    def _beat(self) -> None:
        while True:
            time.sleep(self.heartbeat)
            with self._running_lock:
                running = list(self._running)
            for job_id in running:
                try:
                    self._renew(job_id)
                except Exception as exc:  # a store hiccup: the next beat tries again
                    log.warning("renewing the lease of job %s failed: %s", job_id,
                                type(exc).__name__)

    def _renew(self, job_id: str, progress: str | None = None,
               resume: dict[str, Any] | None = None) -> None:
        """A fresh lease (and the citizen-facing progress text, the executor's
        resume state, if given)."""
        for _ in range(_RETRIES):
            job = self.ctl.jobs.load(job_id)
            if job is None or job.finished or job.owner != this_process():
                return
            update: dict = {"lease_until": time.time() + self.lease}
            if progress is not None:
                update["progress"] = progress
            if resume is not None:
                update["resume"] = resume
            renewed = job.model_copy(update=update)
            try:
                self.ctl.jobs.save(renewed)
            except JobConflict:
                continue
            with self._running_lock:
                if job_id in self._versions:
                    self._versions[job_id] = renewed.version
                if resume is not None:
                    self._resumes[job_id] = resume
            if job.long_running:
                self._touch_session(job.session_id)
            return

    def _touch_session(self, session_id: str) -> None:
        """Keep a long job's session from expiring while it runs (best effort)."""
        session = self.ctl.store.load(session_id)
        if session is not None:
            try:
                self.ctl.store.save(session)
            except SessionConflict:
                pass  # someone else saved it: fresh anyway

    # -- applying outcomes ----------------------------------------------------------

    def apply_outcome(self, session_id: str, job: Job, *, same_turn: bool,
                      session: Session | None = None) -> tuple[Session, list[str]]:
        """The small transaction that records a finished job and applies it to its
        session, both in one atomic write (``SessionStore.save(session, job)``).

        ``session`` is the caller's freshly saved copy, tried first; on a conflict
        the stored one is read again. In the turn that ran the job its text ends
        the reply; otherwise it waits as the session's ``notice``.
        """
        ctl = self.ctl
        for _ in range(_RETRIES):
            session = session if session is not None else ctl.load(session_id)
            if session.job_id != job.id or session.state != State.EXECUTING:
                stored = ctl.jobs.load(job.id)
                if stored is not None and not stored.finished:
                    job = self._record(job)  # nowhere to apply it: the job record keeps it
                if session.job_id != job.id:
                    log.warning("job %s of %s finished (%s) but its session moved on "
                                "(expired, reset or another flow); outcome not shown",
                                job.id, session_ref(session_id), job.status)
                    return session, []
                # Applied already (another worker, a read): this reply tells it too.
                return session, self._told_here(session, job) if same_turn else []
            flow = Flow(session, ctl.deps)
            apply_job(flow, job)
            prompt_next(flow)
            text = flow.moderated(join(flow.st.parts))
            if text != join(flow.st.parts):
                flow.st.parts = [text]
            if same_turn and session.history and session.history[-1].role == "assistant":
                last = session.history[-1]
                session.history[-1] = last.model_copy(update={"text": join([last.text, text])})
                session.show_more(text)
            elif not same_turn:
                session.notice = join([session.notice or "", text])
            try:
                ctl.store.save(session, job=job)
            except SessionConflict:
                session = None
                continue
            except JobConflict:
                fresh = ctl.jobs.load(job.id)
                if fresh is not None and fresh.finished and fresh.status != job.status:
                    log.error("job %s finished twice: kept %s, dropped %s (a lease ran out "
                              "while it ran)", job.id, fresh.status, job.status)
                    job = fresh
                elif fresh is not None:
                    job = job.model_copy(update={"version": fresh.version})
                session = None
                continue
            carry_out(flow.effects, session_id, ctl.files, ctl.audit)
            return session, flow.st.parts if same_turn else []
        raise SessionConflict(session_ref(session_id), expected=-1, found=None)

    def told_elsewhere(self, session_id: str, job_id: str) -> str | None:
        """The outcome of ``job_id``, already told (on another stream), to tell again;
        None when the session has moved on to another job or it is not finished."""
        session = self.ctl.load(session_id)
        job = self.ctl.jobs.load(job_id)
        if job is None or not job.finished or session.job_id != job_id:
            return None
        return outcome_text(Flow(session, self.ctl.deps), job)

    def _told_here(self, session: Session, job: Job) -> list[str]:
        if not session.notice:
            return [outcome_text(Flow(session, self.ctl.deps), job)]
        text, session.notice = session.notice, None  # delivered by this reply
        session.show_more(text)
        try:
            self.ctl.store.save(session)
        except SessionConflict:
            pass  # shown again with the next turn: better twice than never
        return [text]


def _running_text(business: Business, job: Job) -> list[str]:
    lines = [replies.render(replies.JOB_RUNNING, name=business.name)]
    if job.progress:
        lines.append(replies.render(replies.JOB_PROGRESS, progress=job.progress))
    return lines


def _amend(result: TurnResult, extra: list[str], *, job: Job | None) -> TurnResult:
    return result.model_copy(update={"reply": join([result.reply, *extra]),
                                     "job": job_view(job)})
