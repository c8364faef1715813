"""The controller: runs one turn through the machine and owns the session.

See ``flow.machine`` for the lifecycle. Every model or rule decision is
untrusted: a call whose tool the current state does not offer, or whose
arguments name unknown businesses or fields, is rejected and recorded, never
applied.
"""

from __future__ import annotations

import hashlib
import json
import logging
import operator
import threading
import uuid
from collections.abc import Callable, Mapping
from functools import partial
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
from si_agent.errors import ExecutorError, SessionConflict
from si_agent.executor.base import Executor
from si_agent.flow import tools as T
from si_agent.flow.machine import DialogueMachine, FlowModel
from si_agent.flow.steps import StepHandler, registered_step_handlers
from si_agent.flow.turn import TurnResult, display, snapshot
from si_agent.knowledge import Knowledge, NoKnowledge
from si_agent.privacy import redact_arguments, redact_text
from si_agent.session.base import SessionStore, session_ref
from si_agent.session.model import DecisionRecord, FieldState, Session, ToolCallRecord
from si_agent.validators import check as validate_value

log = logging.getLogger(__name__)

_MAX_CONFLICT_RETRIES = 5
_TURN_LOCKS = 64  # striped per-session locks: bounded memory, rare false sharing
_OPS: dict[str, Callable[[Any, Any], bool]] = {
    "==": operator.eq, "!=": operator.ne, "<": operator.lt,
    "<=": operator.le, ">": operator.gt, ">=": operator.ge,
}


class Controller:
    """Runs turns: load → decide → apply through the machine → reply → save."""

    def __init__(
        self,
        catalog: Mapping[str, Business],
        store: SessionStore,
        engine: IntentEngine,
        executor: Executor,
        *,
        knowledge: Knowledge | None = None,
        step_handlers: Mapping[str, StepHandler] | None = None,
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
        self.max_message_chars = max_message_chars
        self.machine = DialogueMachine()
        self._locks = [threading.Lock() for _ in range(_TURN_LOCKS)]
        self._toolsets: dict[tuple[str, str | None, str | None], list[dict]] = {}

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
            session = self.store.load(session_id) or Session(session_id=session_id)
            reply = (
                replies.EMPTY_MESSAGE if not text
                else replies.render(replies.TOO_LONG, limit=self.max_message_chars)
            )
            return snapshot(session, self.catalog, reply)
        # Turns of one user run one at a time in this process; across processes
        # the store's optimistic versioning makes a conflicting turn run again.
        with self._turn_lock(session_id):
            for _ in range(_MAX_CONFLICT_RETRIES):
                session = self.store.load(session_id) or Session(session_id=session_id)
                result = _Turn(self, session, text, on_delta).run()
                try:
                    self.store.save(session)
                except SessionConflict:
                    log.info("session %s changed concurrently; running the turn again",
                             session_ref(session_id))
                    continue
                return result
        raise SessionConflict(session_ref(session_id), expected=-1, found=None)

    def toolset(self, state: str, business: Business | None, step: Step | None) -> list[dict]:
        """The tools ``state`` offers (built once per state, business and step)."""
        key = (state, business.id if business else None, step.id if step else None)
        tools = self._toolsets.get(key)
        if tools is None:
            tools = self._toolsets[key] = T.toolset(state, business, step, self.catalog)
        return tools

    def _turn_lock(self, session_id: str) -> threading.Lock:
        digest = hashlib.blake2b(session_id.encode(), digest_size=4).digest()
        return self._locks[int.from_bytes(digest, "big") % len(self._locks)]

    def current(self, session_id: str) -> TurnResult:
        """The turn object for the stored session, without a reply."""
        session = self.store.load(session_id) or Session(session_id=session_id)
        return snapshot(session, self.catalog)

    def reset(self, session_id: str) -> TurnResult:
        """Forget the session: the user starts again in idle."""
        self.store.delete(session_id)
        return snapshot(Session(session_id=session_id), self.catalog)


class _Turn:
    """One turn's work on one loaded session (see the machine's docstring)."""

    def __init__(
        self, ctl: Controller, session: Session, text: str, on_delta: TextSink | None = None
    ) -> None:
        self.ctl = ctl
        self.s = session
        self.text = text
        self.on_delta = on_delta
        self.decision: Decision | None = None
        self.answers: list[str] = []  # knowledge answers come first in the reply
        self.parts: list[str] = []
        self.records: list[ToolCallRecord] = []
        self.asked = False  # the next prompt was already put in the reply
        self.reasked: set[str] = set()  # fields whose error line already says what to enter

    # -- lifecycle --------------------------------------------------------

    def run(self) -> TurnResult:
        s = self.s
        state_before = s.state
        if s.business_id and s.business_id not in self.ctl.catalog:
            # The business left the configuration while this session was stored.
            self._fire("cancel")
            self._clear()
            self.parts.append(replies.BUSINESS_GONE)
        view = self._view()
        s.suggestion = None  # a suggestion is good for the next turn only
        offered = self.ctl.toolset(s.state, self.business, self.step)
        decision = self.decision = self._decide(view, offered)
        applied = 0
        for call in decision.calls:
            applied += self._apply(call)
        if not applied:
            self._not_understood()
        self._prompt_next()
        reply = "\n".join(p for p in (*self.answers, *self.parts) if p)
        s.turn += 1
        s.usage = s.usage + decision.usage
        s.remember("user", self.text)
        s.remember("assistant", reply)
        s.record(DecisionRecord(
            turn=s.turn, input=redact_text(self.text), engine=decision.engine or self.ctl.engine.name,
            state_before=state_before, state_after=s.state, offered=[
                t["function"]["name"] for t in offered], calls=self.records,
            reason=decision.reason, usage=decision.usage,
        ))
        log.info("turn %s %s: %s -> %s via %s %s; model calls %d", session_ref(s.session_id),
                 s.turn, state_before, s.state, decision.engine, [r.name for r in self.records],
                 decision.usage.model_calls)
        return snapshot(s, self.ctl.catalog, reply, turn_usage=decision.usage)

    def _decide(self, view: SessionView, offered: list[dict]) -> Decision:
        # A model's free text is the answer only without a knowledge base.
        stream = self.on_delta if isinstance(self.ctl.knowledge, NoKnowledge) else None
        return self.ctl.engine.decide(view, self.text, offered, stream)

    # -- helpers over the session -------------------------------------------

    @property
    def business(self) -> Business | None:
        bid = self.s.business_id
        return self.ctl.catalog.get(bid) if bid else None

    @property
    def step(self) -> Step | None:
        b = self.business
        if b is None or self.s.state != "step_executing" or self.s.step_index >= len(b.steps):
            return None
        return b.steps[self.s.step_index]

    def _view(self) -> SessionView:
        s = self.s
        return SessionView(
            state=s.state, business=self.business,
            fields={k: v.model_copy() for k, v in s.fields.items()},
            awaiting=s.awaiting, suggestion=s.suggestion, step=self.step,
            history=tuple(m.model_copy() for m in s.history),
            result=dict(s.result) if s.result else None, catalog=self.ctl.catalog,
        )

    def _fire(self, trigger: str) -> None:
        b = self.business
        model = FlowModel(self.s.state, requires_confirm=bool(b and b.require_confirm))
        self.ctl.machine.fire(model, trigger)
        self.s.state = model.state

    def _record(self, call: ToolCall, outcome: str) -> None:
        self.records.append(ToolCallRecord(
            name=call.name, arguments=redact_arguments(call.arguments, self.business),
            outcome=outcome,
        ))

    # -- applying tool calls --------------------------------------------------

    def _apply(self, call: ToolCall) -> int:
        """Apply one call if the current state offers it; 1 if applied."""
        offered = T.tool_names(self.ctl.toolset(self.s.state, self.business, self.step))
        if call.name not in offered:
            self._record(call, f"rejected: {call.name} not offered in {self.s.state}")
            return 0
        handler = self._handlers().get(call.name)
        if handler is None and call.name.startswith(T.STEP_PREFIX):
            handler = self._upload
        if handler is None:
            self._record(call, "rejected: no handler")
            return 0
        try:
            outcome = handler(call)
        except MachineError as exc:  # a trigger not allowed here: the call was wrong
            outcome = f"rejected: {exc}"
        self._record(call, outcome)
        return 0 if outcome.startswith("rejected") else 1

    def _handlers(self) -> dict[str, Callable[[ToolCall], str]]:
        return {
            T.MATCH_BUSINESS: self._match_business,
            T.ANSWER_QUESTION: self._answer_question,
            T.PROVIDE_FIELD: self._provide_field,
            T.CANCEL_FLOW: self._cancel,
            T.CONFIRM_SUBMIT: partial(self._submit, "confirm"),
            T.MODIFY_INFO: self._modify,
            T.RETRY_SUBMIT: partial(self._submit, "retry"),
        }

    def _match_business(self, call: ToolCall) -> str:
        bid = call.arguments.get("business_id")
        business = self.ctl.catalog.get(bid) if isinstance(bid, str) else None
        if business is None:
            return f"rejected: unknown business {bid!r}"
        s = self.s
        if s.state == "done":
            self._fire("reset")
        self._clear()
        s.business_id = business.id
        s.fields = {f.key: FieldState() for f in business.fields}
        s.suggestion = None
        s.flow_nonce = uuid.uuid4().hex
        self._fire("begin_steps" if business.steps else "begin")
        self.parts.append(replies.render(replies.START, name=business.name))
        if not business.steps and not business.fields:
            self._complete()
        return "applied"

    def _answer_question(self, call: ToolCall) -> str:
        question = str(call.arguments.get("question") or "").strip()
        answer = self.ctl.knowledge.answer(question) if question else None
        suggested = call.arguments.get("suggested_business_id")
        if answer and answer.suggested_business_id and not suggested:
            suggested = answer.suggested_business_id
        can_suggest = suggested in self.ctl.catalog and self.s.state in ("idle", "done")
        model_text = self.decision.text if self.decision else None
        if answer:
            self.answers.append(answer.text)
        elif model_text and isinstance(self.ctl.knowledge, NoKnowledge):
            self.answers.append(model_text)
        elif question or not can_suggest:
            self.answers.append(replies.NO_ANSWER)
        if can_suggest:
            self.s.suggestion = suggested
            self.parts.append(replies.render(replies.SUGGEST, name=self.ctl.catalog[suggested].name))
        elif self.business is not None and self.s.state not in ("idle", "done"):
            self.parts.append(replies.render(replies.CONTINUE, name=self.business.name))
        return "applied"

    def _provide_field(self, call: ToolCall) -> str:
        values = call.arguments.get("values")
        if not isinstance(values, dict) or not values:
            return "rejected: values must be a non-empty object"
        business = self.business
        assert business is not None
        known = {k: v for k, v in values.items() if k in business.field_keys}
        if not known:
            return f"rejected: unknown fields {sorted(values)}"
        outcome = self._set_fields(business, known)
        if not self._pending(business):
            self._complete()
        return outcome

    def _set_fields(self, business: Business, values: Mapping[str, Any]) -> str:
        s = self.s
        recorded: list[str] = []
        problems: list[str] = []
        for key, raw in values.items():
            field = business.field(key)
            st = s.fields.setdefault(key, FieldState())
            res = validate_value(field.type, "" if raw is None else str(raw),
                                 **field.validator_options())
            if res.ok:
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
        return f"applied: collected={recorded} invalid={bad}"

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
        """All fields or steps are in: confirm or execute."""
        b = self.business
        assert b is not None
        self.s.awaiting = None
        self._fire("steps_done" if self.s.state == "step_executing" else "fields_done")
        if self.s.state == "confirming":
            self.s.awaiting = "confirm"
        else:
            self._execute()

    def _cancel(self, call: ToolCall) -> str:
        b = self.business
        if self.s.state in ("idle", "done"):
            self.parts.append(replies.NOTHING_TO_CANCEL)
            return "applied: nothing to cancel"
        self._fire("cancel")
        self._clear()
        self.parts.append(replies.render(replies.CANCELLED, name=b.name) if b
                          else replies.NOTHING_TO_CANCEL)
        self.asked = True
        return "applied"

    def _clear(self) -> None:
        s = self.s
        s.business_id = None
        s.fields = {}
        s.awaiting = None
        s.step_index = s.step_attempts = 0
        s.step_data = {}
        s.result = None
        s.flow_nonce = None

    def _submit(self, trigger: str, call: ToolCall) -> str:
        """``confirm`` (from confirming) or ``retry`` (from failed): execute."""
        self._fire(trigger)
        self._execute()
        return "applied"

    def _modify(self, call: ToolCall) -> str:
        b = self.business
        assert b is not None
        key = call.arguments.get("field_key")
        if key not in b.field_keys:
            return f"rejected: unknown field {key!r}"
        if self.s.state != "collecting":
            self._fire("modify" if self.s.state == "confirming" else "fix")
        value = call.arguments.get("value")
        st = self.s.fields.setdefault(key, FieldState())
        if value not in (None, ""):
            # The old value is what the user called wrong: an invalid new one
            # leaves the field to be asked again, not the old value in place.
            st.status = "pending"
            outcome = self._set_fields(b, {key: value})
            if not self._pending(b):
                self._complete()
            return outcome
        st.status = "pending"
        self.s.awaiting = key
        self.parts.append(replies.render(replies.MODIFY_ASK, label=b.field(key).label))
        return "applied: awaiting new value"

    def _upload(self, call: ToolCall) -> str:
        step, b = self.step, self.business
        assert step is not None and b is not None
        handler = self.ctl.step_handlers.get(step.handler)
        if handler is None:
            self.parts.append(replies.render(replies.STEP_UNAVAILABLE, label=step.label))
            self.asked = True
            return f"applied: no handler {step.handler!r} on this deployment"
        result = handler.run(step, call.arguments)
        s = self.s
        if not result.ok:
            s.step_attempts += 1
            self.parts.append(replies.render(replies.STEP_FAILED, label=step.label,
                                             error=result.error or step.error_msg or ""))
            if s.step_attempts >= b.max_attempts:
                self.parts.append(replies.render(replies.ESCALATE, label=step.label,
                                                 attempts=s.step_attempts))
                s.step_attempts = 0
            return "applied: step failed"
        s.step_data[step.id] = result.data
        s.step_index += 1
        s.step_attempts = 0
        self.parts.append(replies.render(replies.STEP_DONE, label=step.label))
        if s.step_index >= len(b.steps):
            self._complete()
        return "applied: step done"

    # -- executing --------------------------------------------------------------

    def _values(self, business: Business) -> dict[str, Any]:
        values = {k: st.value for k, st in self.s.fields.items() if st.status == "collected"}
        values.update(self.s.step_data)
        return values

    def _idempotency_key(self, business: Business, values: Mapping[str, Any]) -> str:
        payload = json.dumps([self.s.session_id, business.id, self.s.flow_nonce, values],
                             sort_keys=True, ensure_ascii=False, default=str)
        return hashlib.sha256(payload.encode()).hexdigest()[:32]

    def _execute(self) -> None:
        b = self.business
        assert b is not None and self.s.state == "executing"
        values = self._values(b)
        try:
            result = self.ctl.executor.run(b, values, idempotency_key=self._idempotency_key(b, values))
        except ExecutorError as exc:
            self._fire("fail")
            self._failed(b, exc)
            return
        self._fire("succeed")
        self.s.result = result
        self.s.awaiting = None
        shown = {
            k: (display(b.field(k).type, v) if k in b.field_keys else v) for k, v in values.items()
        }
        self.parts.append(replies.render(b.api.result_template, {**shown, **result}))
        self.asked = True

    def _failed(self, b: Business, exc: ExecutorError) -> None:
        field_errors = {k: v for k, v in exc.field_errors.items() if k in b.field_keys}
        if not field_errors:
            self.s.awaiting = "retry"
            template = replies.EXEC_FAILED if b.type == "handle" else replies.QUERY_FAILED
            self.parts.append(replies.render(template, message=exc.message))
            self.asked = True
            return
        self._fire("fix")
        for key, message in field_errors.items():
            st = self.s.fields.setdefault(key, FieldState())
            st.status, st.error = "failed", message
        items = "；".join(f"{b.field(k).label}：{m.rstrip('。')}" for k, m in field_errors.items())
        self.parts.append(replies.render(replies.EXEC_FIELD_FAILED, items=items))
        self.s.awaiting = next(iter(field_errors))

    # -- the closing prompt --------------------------------------------------------

    def _not_understood(self) -> None:
        if self.s.state in ("idle", "done"):
            examples = "、".join(b.name for b in list(self.ctl.catalog.values())[:4])
            self.parts.append(replies.render(replies.GREETING, examples=examples))
            self.asked = True
        else:
            self.parts.append(replies.NOT_UNDERSTOOD)

    def _prompt_next(self) -> None:
        """End the reply with what the dialogue needs next, unless already asked."""
        if self.asked:
            return
        s, b = self.s, self.business
        if b is None or s.state in ("idle", "done"):
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
            s.awaiting = "retry"
            self.parts.append(replies.FAILED_REASK)

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
