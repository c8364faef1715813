"""The browser agent taking over a form (``HandOver``): when required controls are
left that no value of the business fits, direct matching cannot finish the form,
and the agent (perceive → decide → act → observe) tries with the business's
values and every label known for them, on the portal only (see ``guarded`` for
how the parts of a job fit).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from si_agent.errors import ExecutorError
from si_agent.executor import texts
from si_agent.executor.rpa.form import Control
from si_agent.executor.rpa.guarded import GuardedJob
from si_agent.executor.rpa.trace import FAILED, FILLED, UNFILLED, FieldStatus


class HandOver(GuardedJob):
    """A job that can hand its form to the browser agent."""

    def _unplaced(self, controls: list[Control], matched: dict[str, Control],
                  fixed: Mapping[str, Any]) -> bool:
        """Required controls left empty here that no value of the business fits:
        direct matching cannot finish this form (the agent may, or says what is missing)."""
        return any(c.required and not c.value and c.name not in fixed
                   and c not in matched.values() for c in controls)

    def _hand_over(self) -> dict:
        """Let the browser agent (perceive → decide → act → observe) finish the form,
        with the business's values and every label known for them."""
        from si_agent.agent import ActionRunner, Agent, DomPerception, Goal
        from si_agent.executor.rpa.form import synonyms

        self.trace.note("direct matching cannot place every value: the agent takes over")
        labels: dict[str, list[str]] = {}
        values: dict[str, str] = {}
        for f in self.business.fields:
            if self.values.get(f.key) is None:
                continue
            values[f.key] = str(self.values[f.key])
            labels[f.key] = [x for x in (self.options.fields.get(f.key), f.label) if x]
            labels[f.key] += list(synonyms().get(f.key, ()))
        for n, (label, value) in enumerate(self.options.fixed.items()):
            values[f"fixed_{n}"] = "true" if value is True else str(value)
            labels[f"fixed_{n}"] = [label]
        goal = Goal(task=texts.RPA_AGENT_TASK.format(name=self.business.name), values=values,
                    labels=labels, success=self.options.success)
        agent = Agent(DomPerception(), self.decider, max_steps=self.options.agent_steps,
                      runner=ActionRunner(self.options.action_timeout * 1000),
                      origins=self.guard.policy)
        result = agent.run(self.page, goal, trace_dir=self.trace.directory / "agent")
        self.trace.note(f"agent: {'done' if result.success else 'stopped'} after "
                        f"{len(result.steps)} steps")
        if result.off_portal:
            self.submitted = self.submitted or result.unknown
            raise self._off_portal(f"agent: {result.off_portal}")
        if result.success:
            self.trace.fields = [FieldStatus(label=self.business.field(k).label, key=k,
                                             status=FILLED) for k in values if not
                                 k.startswith("fixed_")]
            output: dict[str, Any] = dict(result.output)
            output["field_status"] = [f.model_dump(exclude={"value"}) for f in self.trace.fields]
            return output
        if result.unknown:  # something was submitted: never again, say it
            raise ExecutorError(texts.RPA_NO_RESULT, retryable=False, unknown=True,
                                resume=self.trace.resume)
        failed = {k: v for k, v in result.failed.items() if not k.startswith("fixed_")}
        self.trace.fields = [FieldStatus(label=self.business.field(k).label, key=k,
                                         status=FAILED, reason=v) for k, v in failed.items()]
        self.trace.fields += [FieldStatus(label=m, key=None, status=UNFILLED)
                              for m in result.missing]
        if failed and not result.missing:
            raise ExecutorError(texts.RPA_FIELDS_FAILED, field_errors=failed, retryable=False,
                                resume=self.trace.resume)
        reason = "、".join(f"{m}{UNFILLED}" for m in result.missing) or result.message
        raise ExecutorError(texts.RPA_REFUSED.format(reason=reason), field_errors=failed,
                            retryable=False, resume=self.trace.resume)
