"""One turn on one loaded session: bring it up to date, apply a decision, reply.

``Turn.prepare`` brings the session up to date (a business that left the
configuration, a job that finished, a consultation to take up again);
``Turn.run`` applies the decision's calls, each through the handler table
(``flow.handlers``) after checking it against the toolset of the state the
machine is in at that moment, then ends the reply with what is needed next
(``flow.closing``) and returns the turn object.

What must happen to the outside world (step files, audit entries, the job to
run) is left in ``effects`` for the controller to carry out after the save.
The turn reads through its dependencies (``flow.deps``): stored step files and
consultation profiles, the job record, the knowledge channel and step
handlers. One exception writes: the first time a ``fields: discover``
business is needed in a process, its web form is read (which may open a
browser), cached on disk and put into the shared catalog. All these results
are memoised across re-runs of the same decision.
"""

from __future__ import annotations

import logging

from transitions import MachineError

from si_agent import replies
from si_agent.core import actions as A
from si_agent.core import consult
from si_agent.core.decision import Decision, ToolCall
from si_agent.core.state import AT_REST, State
from si_agent.flow.closing import not_understood, prompt_next
from si_agent.flow.handlers import HANDLERS
from si_agent.flow.handlers.fields import settle_heard
from si_agent.flow.handlers.slots import keep_profile, resume_profile
from si_agent.flow.moves import Flow, join
from si_agent.flow.outcomes import apply_job
from si_agent.flow.result import TurnResult, snapshot
from si_agent.privacy import redact_text
from si_agent.session.base import session_ref
from si_agent.session.model import DecisionRecord

log = logging.getLogger(__name__)


class Turn(Flow):
    """One user turn (see the module docstring and ``core.machine``'s lifecycle)."""

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
                self.fire("cancel")
                self.clear()
            if s.state in AT_REST:
                resume_profile(self)
        if s.notice:
            self.st.notices.append(s.notice)
            s.notice = None
        if s.business_id and s.business_id not in self.deps.catalog:
            # The business left the configuration while this session was stored.
            self.fire("cancel")
            self.clear()
            self.st.parts.append(replies.BUSINESS_GONE)
            return
        if s.state == State.EXECUTING and s.job_id:
            job = self.deps.jobs.load(s.job_id)
            if job is not None and job.finished:
                apply_job(self, job)
                self.st.notices.extend(self.st.parts)
                self.st.parts = []
                self.st.asked = False

    def run(self, decision: Decision) -> TurnResult:
        s = self.s
        self.decision = decision
        b = self.business
        self.st.consulting = b if b is not None and b.is_consult and s.state == State.COLLECTING \
            else None
        if self.st.consulting is not None:
            self.st.theme_asked = consult.current_theme(self.st.consulting, s.fields)
        self.st.pending_suggestion = s.suggestion
        s.suggestion = None  # a suggestion is good for the next turn only
        self.st.start_over_asked, s.start_over_asked = s.start_over_asked, False  # so is this
        offered = self.tools()
        applied = 0
        if s.heard and settle_heard(self):  # yes or no to numbers read back: nothing else
            applied = 1
        for call in decision.calls if not applied else ():
            applied += self._apply(call)
        for call in self._values_for_discovered(decision):
            applied += self._apply(call)
        if not applied:
            not_understood(self)
        prompt_next(self)
        reply = self.moderated(join([*self.st.notices, *self.st.answers, *self.st.parts]))
        s.turn += 1
        keep_profile(self)
        if s.step_files:  # the photos live as long as the session
            self.effects.touch(self.owner())
        s.usage = s.usage + decision.usage
        s.remember("user", self.text)
        s.remember("assistant", reply)
        shown = redact_text(self.text)
        s.show("user", shown)
        s.show("assistant", reply)
        s.record(DecisionRecord(
            turn=s.turn, input=shown,
            engine=decision.engine or self.deps.engine_name, state_before=self.state_before,
            state_after=s.state, offered=[t["function"]["name"] for t in offered],
            calls=self.st.records, rule=decision.rule.value, confidence=decision.confidence,
            reason=decision.reason,
            usage=decision.usage if decision.usage.model_calls else None,
        ))
        if log.isEnabledFor(logging.INFO):  # the digest and the list only when logged
            log.info("turn %s %s: %s -> %s via %s %s (%s); model calls %d",
                     session_ref(s.session_id), s.turn, self.state_before, s.state,
                     decision.engine, [r.name for r in self.st.records], decision.rule.value,
                     decision.usage.model_calls)
        s.listed = list(self.st.services)
        return snapshot(s, self.deps.catalog, reply, turn_usage=decision.usage,
                        photo=self.st.photo).model_copy(update={"message": shown})

    def _apply(self, call: ToolCall) -> int:
        """Apply one call if the current state offers it; 1 if applied."""
        offer = self.offer()
        action = A.action_for(call.name)
        if action is None or not action.offered(offer) or action.tool_name(offer) != call.name:
            outcome = A.rejected(A.Reason.NOT_OFFERED,
                                 f"{call.name} not offered in {self.s.state}")
        else:
            try:
                args = A.parse_arguments(action, call.arguments)
                outcome = HANDLERS[action.name](self, args)
            except A.BadArguments as exc:
                outcome = A.rejected(A.Reason.BAD_ARGUMENTS, exc.problem)
            except MachineError as exc:  # a trigger not allowed here: the call was wrong
                outcome = A.rejected(A.Reason.NOT_ALLOWED, str(exc))
        self.record(call, outcome)
        return int(outcome.applied)

    def _values_for_discovered(self, decision: Decision) -> list[ToolCall]:
        """Values stated with the request that started a business whose form was read
        in this turn: the engine decided before the fields were known, so it reads the
        message again for them (``ValuesWithRequest``; memoised like a decision)."""
        b = self.business
        finder = self.deps.values_with_request
        if (finder is None or b is None or not self.memo.get(("read", b.id))
                or self.s.state != State.COLLECTING
                or any(c.name == A.PROVIDE_FIELD for c in decision.calls)):
            return []
        key = ("values", b.id)
        if key not in self.memo:
            self.memo[key] = finder.start(self.view(), b, self.text)
        return [c for c in self.memo[key] if c.name == A.PROVIDE_FIELD]
