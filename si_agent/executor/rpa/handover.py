"""The browser agent taking over a form (``HandOver``): when required controls are
left that no value of the business fits, or when the submit is next while values
given are in no control, direct matching cannot finish the form, and the agent
(perceive → decide → act → observe) tries with the business's values and every
label known for them, on the portal only (see ``guarded`` for how the parts of a
job fit). The values no control took must be placed before the agent may submit
(``Goal.must_place``); those it cannot place end the job unsubmitted, named to
the citizen (``texts.RPA_UNPLACED``), never as a success.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from si_agent.errors import ExecutorError
from si_agent.executor import texts
from si_agent.executor.rpa.form import Control
from si_agent.executor.rpa.guarded import GuardedJob
from si_agent.executor.rpa.trace import FAILED, FILLED, UNFILLED, FieldStatus
from si_agent.labels import repeats

log = logging.getLogger(__name__)


class HandOver(GuardedJob):
    """A job that can hand its form to the browser agent."""

    def _unplaced(self, controls: list[Control], matched: dict[str, Control],
                  fixed: Mapping[str, Any]) -> bool:
        """Required controls left empty here that no value given fits:
        direct matching cannot finish this form (the agent may, or says what is missing)."""
        given = [c for k, c in matched.items() if self.values.get(k) is not None]
        repeated = {controls[i].key for i in repeats(
            [c.label for c in controls], {i: k for i, c in enumerate(controls)
                                          for k, m in matched.items() if m.key == c.key})}
        return any(c.required and not c.value and c.folded not in fixed
                   and c not in given and c.key not in repeated for c in controls)

    def _hand_over(self) -> dict:
        """Let the browser agent (perceive → decide → act → observe) finish the form,
        with the business's values and every label known for them; the values no
        control took yet must be placed before it may submit."""
        from si_agent.agent import ActionRunner, Agent, DomPerception, Goal
        from si_agent.executor.rpa.form import synonyms

        left = self._left_out()
        self.trace.note("direct matching cannot place every value: the agent takes over"
                        + (f" (to place {', '.join(left)})" if left else ""))
        labels: dict[str, list[str]] = {}
        values: dict[str, str | list[str]] = {}
        for f in self.business.fields:
            if self.values.get(f.key) is None:
                continue
            value = self.values[f.key]
            values[f.key] = [str(v) for v in value] if isinstance(value, list | tuple) \
                else str(value)
            labels[f.key] = [x for x in (self.options.fields.get(f.key), f.label) if x]
            labels[f.key] += list(synonyms().get(f.key, ()))
        for n, (label, value) in enumerate(self.options.fixed.items()):
            values[f"fixed_{n}"] = "true" if value is True else str(value)
            labels[f"fixed_{n}"] = [label]
        goal = Goal(task=texts.RPA_AGENT_TASK.format(name=self.business.name), values=values,
                    labels=labels, success=self.options.success, must_place=left,
                    next=[self.options.next], submit=[self.options.submit])
        agent = Agent(DomPerception(), self.decider, max_steps=self.options.agent_steps,
                      runner=ActionRunner(self.options.action_timeout * 1000),
                      origins=self.guard.policy)
        result = agent.run(self.page, goal, trace_dir=self.trace.directory / "agent")
        self.trace.note(f"agent: {'done' if result.success else 'stopped'} after "
                        f"{len(result.steps)} steps"
                        + (f"; in no control: {', '.join(result.unplaced)}"
                           if result.unplaced else ""))
        if result.off_portal:
            self.submitted = self.submitted or result.unknown
            raise self._off_portal(f"agent: {result.off_portal}")
        unplaced = {k: (UNFILLED, texts.RPA_NO_PLACE) for k in result.unplaced}
        if result.success:
            if result.unplaced:  # a submit the agent's guard did not know as one
                log.warning("rpa job %s for %s: the agent submitted with %s in no control",
                            self.job.id, self.business.id, ", ".join(result.unplaced))
            self.trace.fields = self._table((FILLED, ""), unplaced)
            output: dict[str, Any] = dict(result.output)
            output["field_status"] = [f.model_dump(exclude={"value"}) for f in self.trace.fields]
            return output
        failed = {k: v for k, v in result.failed.items() if not k.startswith("fixed_")}
        marked = {**unplaced, **{k: (FAILED, v) for k, v in failed.items()}}
        self.trace.fields = self._table((FILLED, ""), marked) + [
            FieldStatus(label=m, key=None, status=UNFILLED) for m in result.missing]
        if result.unknown:  # something was submitted: never again, say it
            raise ExecutorError(texts.RPA_NO_RESULT, retryable=False, unknown=True,
                                resume=self.trace.resume)
        if failed and not result.missing:
            raise ExecutorError(texts.RPA_FIELDS_FAILED, field_errors=failed, retryable=False,
                                resume=self.trace.resume)
        if result.unplaced and not result.missing:
            # Not submitted: asking the citizen again cannot give the form a place for
            # them, so the refusal names them (修改 / 取消 / the hand-off).
            names = "、".join(self.business.field(k).label for k in result.unplaced)
            raise ExecutorError(texts.RPA_UNPLACED.format(labels=names), field_errors=failed,
                                retryable=False, resume=self.trace.resume)
        reason = "、".join(f"{m}{UNFILLED}" for m in result.missing) or result.message
        raise ExecutorError(texts.RPA_REFUSED.format(reason=reason), field_errors=failed,
                            retryable=False, resume=self.trace.resume)
