"""The loop: perceive → decide → act → observe, until the decider finishes.

It stops after ``max_steps`` (default 30) or ``max_failures`` (3) failed actions in
a row. A failed action goes into memory with its evidence, so the decider does not
repeat it blindly. A trace (optional) keeps a screenshot per step and a JSONL line
per step: the view's digest, the step and the observation, with the task's values
masked.

With ``origins`` (an ``si_agent.origins.OriginPolicy``) the agent stays
on those origins: its page's browser context routes every request through the
policy (a request elsewhere is aborted), it never acts on a page outside them nor
clicks a link or submit button leading elsewhere, and a finish counts only on
their pages. It stops at once (``AgentResult.off_portal`` says why) when the page
left them or the guard blocked a navigation or data leaving them.

With ``Goal.must_place`` no value is left out unsaid: a click on a submit button
while one of those values is in no control (``decision.placed``) is not taken,
whatever the decider chose; the task ends there, and every ending lists the ones
never placed in ``AgentResult.unplaced``.
"""

from __future__ import annotations

import json
import logging
import re
import time
from pathlib import Path
from typing import Any

from si_agent.agent import texts
from si_agent.agent.decision import Decider, mask_tree, mask_values, placed, presses_submit
from si_agent.agent.executor import ActionRunner
from si_agent.agent.models import (
    Click,
    Finish,
    Goal,
    Observation,
    Outcome,
    Record,
    Step,
    View,
)
from si_agent.agent.observer import ModelCheck, ResultObserver
from si_agent.agent.perception import Perception, form_values
from si_agent.origins import destination
from si_agent.origins import guard as install_guard

log = logging.getLogger(__name__)


class AgentResult(Outcome):
    """The task's ``Outcome``, with the steps taken and the time it took."""

    steps: list[Record] = []
    seconds: float = 0.0
    off_portal: str | None = None  # why it stopped on leaving the allowed origins (for staff)


class Trace:
    """Screenshots and a JSONL of the steps, with the task's values masked."""

    def __init__(self, directory: Path, goal: Goal) -> None:
        self.directory = directory
        self.goal = goal
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        self._lines = (directory / "steps.jsonl").open("a", encoding="utf-8")

    def record(self, n: int, page: Any, digest: str, step: Step, seen: Observation) -> None:
        """One step; a trace that cannot be written never stops the task."""
        try:
            page.screenshot(path=str(self.directory / f"{n:02d}.png"), mask=[form_values(page)])
            line = {"n": n, "view": mask_values(digest, self.goal),
                    "step": mask_tree(step.model_dump(), self.goal),
                    "observation": mask_tree(seen.model_dump(), self.goal)}
            self._lines.write(json.dumps(line, ensure_ascii=False) + "\n")
            self._lines.flush()
        except Exception as exc:  # a closed page, a full disk
            log.warning("agent trace step %d not written: %s", n, type(exc).__name__)

    def close(self) -> None:
        self._lines.close()


class Agent:
    """Four replaceable parts and a memory."""

    def __init__(self, perception: Perception, decider: Decider, *,
                 runner: ActionRunner | None = None, observer: ResultObserver | None = None,
                 checker: ModelCheck | None = None, max_steps: int = 30,
                 max_failures: int = 3, origins: Any = None) -> None:
        self.perception = perception
        self.decider = decider
        self.runner = runner or ActionRunner()
        self.observer = observer or ResultObserver()
        self.checker = checker  # settles what the mechanical checks cannot
        self.max_steps = max_steps
        self.max_failures = max_failures
        self.origins = origins  # an OriginPolicy: the only origins it may visit

    def run(self, page: Any, goal: Goal, *, trace_dir: Path | None = None,
            on_step: Any = None) -> AgentResult:
        started = time.monotonic()
        memory: list[Record] = []
        trace = Trace(trace_dir, goal) if trace_dir else None
        failures = 0
        # A confirm("确定提交？") after the agent's own click is what the click meant;
        # left alone, Playwright would dismiss it and the submit would not happen.
        page.on("dialog", lambda dialog: dialog.accept())
        guard = None
        if self.origins is not None:
            guard = install_guard(page.context, self.origins)
        try:
            view = self.perception.perceive(page)
            done: set[str] = set()  # the values of goal.must_place seen in a control so far
            for n in range(1, self.max_steps + 1):
                done |= placed(goal, view, memory)
                step = self.decider.decide(goal, view, memory)
                step = self._held_back(step, goal, view, done)
                left = self._off_portal(page, step, guard)
                if left is not None:
                    clicked = any(isinstance(r.step.action, Click) for r in memory)
                    return AgentResult(success=False, unknown=clicked, steps=memory,
                                       message="页面离开了办理网站，已停止操作", off_portal=left,
                                       seconds=time.monotonic() - started)
                if isinstance(step.action, Finish):
                    step = self._verified(page, step, goal)
                    seen = Observation(status="ok", evidence="finished")
                    memory.append(Record(step=step, observation=seen, url=view.url))
                    if trace:
                        trace.record(n, page, view.digest(), step, seen)
                    if on_step:
                        on_step(step, seen)
                    outcome = step.action.model_dump(exclude={"type"})
                    outcome["unplaced"] = _unplaced(goal, done, outcome["unplaced"])
                    return AgentResult(**outcome, steps=memory,
                                       seconds=time.monotonic() - started)
                ref = getattr(step.action, "ref", None)
                element = view.element(ref) if ref else None
                target, group = (element.name, element.group) if element else ("", "")
                try:
                    self.runner.perform(page, step, goal.texts())
                except Exception as exc:  # the element is gone, a timeout: see what happened
                    after = self.perception.perceive(page)
                    seen = Observation(status="failed" if after.digest() == view.digest()
                                       else "uncertain", evidence=type(exc).__name__)
                else:
                    after = self.perception.perceive(page)
                    seen = self.observer.observe(step, view, after, goal.texts())
                    if self.checker is not None:
                        seen = self.checker.settle(step, view, after, seen,
                                                   lambda text: mask_values(text, goal))
                memory.append(Record(step=step, observation=seen, url=view.url, target=target,
                                     group=group, submitted=presses_submit(step, view, goal)))
                if trace:
                    trace.record(n, page, view.digest(), step, seen)
                if on_step:
                    on_step(step, seen)
                failures = failures + 1 if seen.status == "failed" else 0
                if failures >= self.max_failures:
                    return AgentResult(success=False, steps=memory,
                                       unplaced=_unplaced(goal, done | placed(goal, after, memory)),
                                       message=texts.FAILED_IN_A_ROW.format(
                                           failures=failures, evidence=seen.evidence),
                                       seconds=time.monotonic() - started)
                view = after
            return AgentResult(success=False, steps=memory,
                               unplaced=_unplaced(goal, done | placed(goal, view, memory)),
                               message=texts.OUT_OF_STEPS.format(max_steps=self.max_steps),
                               seconds=time.monotonic() - started)
        finally:
            if trace:
                trace.close()

    def _off_portal(self, page: Any, step: Step, guard: Any) -> str | None:
        """Why ``step`` must not be taken under the origin policy, or None."""
        if self.origins is None:
            return None
        if guard is not None and guard.fatal:
            return guard.fatal[0].describe()
        if not self.origins.allows(page.url):
            return f"the page is at {page.url.split('?', 1)[0][:80]}"
        ref = getattr(step.action, "ref", None)
        if isinstance(step.action, Click) and ref:
            try:
                target = destination(page.locator(f"aria-ref={ref}"))
            except Exception:  # the element is gone: the click fails on its own
                return None
            if target is not None and not self.origins.allows(target):
                return f"a click on {ref} leads to {target.split('?', 1)[0][:80]}"
        return None

    @staticmethod
    def _held_back(step: Step, goal: Goal, view: View, done: set[str]) -> Step:
        """``step``, or a finish in its place when it would submit the form while a
        value of ``goal.must_place`` is in no control: nothing is sent with a value
        left out, whatever the decider chose."""
        if not goal.must_place or not presses_submit(step, view, goal):
            return step
        left = _unplaced(goal, done)
        if not left:
            return step
        names = "、".join((goal.labels.get(k) or [k])[0] for k in left)
        return Step(thought=texts.HELD_BACK_THOUGHT, action=Finish(
            success=False, unplaced=left, message=texts.UNPLACED.format(names=names)))

    @staticmethod
    def _verified(page: Any, step: Step, goal: Goal) -> Step:
        """A successful finish holds only if the page shows the result (its output is
        read from the page, not taken from the decider)."""
        action = step.action
        if not action.success:
            return step
        found = re.search(goal.success, page.inner_text("body"))
        if found is None:
            return step.model_copy(update={"action": Finish(
                success=False, unknown=True, message=texts.NO_RESULT_ON_PAGE)})
        output = {k: v for k, v in found.groupdict().items() if v}
        return step.model_copy(update={"action": action.model_copy(update={"output": output})})


def _unplaced(goal: Goal, done: set[str], said: list[str] | None = None) -> list[str]:
    """The keys of ``goal.must_place`` not ``done`` (seen in a control so far), and those
    the decider said it could not place, in the goal's order."""
    return [k for k in goal.must_place if k not in done or k in (said or ())]
