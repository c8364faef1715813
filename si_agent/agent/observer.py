"""The result observer: did the action do what it was expected to?

Mechanical checks by action: a typed or chosen value is there, a box is ticked,
a click moved the page on (another URL, the element gone, the page changed) and
whether a new error was announced. What cannot be checked so is ``uncertain``;
an optional model check (``ModelCheck``, yes / no / uncertain) may settle it.
"""

from __future__ import annotations

from collections.abc import Mapping

from si_agent.agent.executor import fill_in
from si_agent.agent.models import Check, Click, Finish, Input, Observation, Select, Step, View


class ResultObserver:
    def observe(self, step: Step, before: View, after: View,
                values: Mapping[str, str]) -> Observation:
        action = step.action
        if isinstance(action, Finish):
            return Observation(status="ok", evidence="finished")
        ref = getattr(action, "ref", None)
        target = after.element(ref) if ref else None
        if isinstance(action, Input):
            wanted = fill_in(action.text, values)
            if target is None:
                return Observation(status="uncertain", evidence="the field is gone")
            ok = target.value.replace(" ", "") == wanted.replace(" ", "")
            return Observation(status="ok" if ok else "failed",
                               evidence="value set" if ok else "the field shows another value")
        if isinstance(action, Select):
            ok = target is not None and target.value == action.option
            return Observation(status="ok" if ok else "failed",
                               evidence=f"chose {action.option}" if ok else "not chosen")
        if isinstance(action, Check):
            ok = target is not None and bool(target.checked) == action.checked
            return Observation(status="ok" if ok else "failed",
                               evidence="ticked" if ok else "not ticked")
        if isinstance(action, Click):
            return _after_click(before, after, ref)
        return Observation(status="uncertain", evidence="not checked")


def _after_click(before: View, after: View, ref: str | None) -> Observation:
    new_errors = sorted({f"{e.name}：{e.error}" for e in after.elements if e.error}
                        - {f"{e.name}：{e.error}" for e in before.elements if e.error})
    if new_errors:
        return Observation(status="failed", evidence="；".join(new_errors))
    if after.url != before.url or (ref and after.element(ref) is None):
        return Observation(status="ok", evidence=f"now at {after.title or after.url}")
    if after.digest() != before.digest() or after.summary != before.summary:
        return Observation(status="ok", evidence="the page changed")
    return Observation(status="uncertain", evidence="nothing visible changed")
