"""The result observer: did the action do what it was expected to?

Mechanical checks by action: a typed or chosen value is there, a box is ticked,
a click moved the page on (another URL, the element gone, the page changed) and
whether a new error was announced. What cannot be checked so is ``uncertain``;
an optional model check (``ModelCheck``, yes / no / uncertain) may settle it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from si_agent.agent.executor import fill_in
from si_agent.agent.models import Check, Click, Finish, Input, Observation, Select, Step, View
from si_agent.engine.prompts import AGENT_CHECK
from si_agent.form_values import typed

if TYPE_CHECKING:
    from si_agent.engine.chat import ChatModel


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
            wanted = typed(target.input_type, wanted, target.hint) or wanted  # a date input
            ok = target.value.replace(" ", "") == wanted.replace(" ", "")
            return Observation(status="ok" if ok else "failed",
                               evidence="value set" if ok else "the field shows another value")
        if isinstance(action, Select):
            chosen = {fill_in(o, values) for o in (action.option, *action.also)}
            ok = target is not None and (set(target.value.split("、")) == chosen if action.also
                                         else target.value == fill_in(action.option, values))
            return Observation(status="ok" if ok else "failed",
                               evidence=f"chose {action.option}" if ok else "not chosen")
        if isinstance(action, Check):
            ok = target is not None and bool(target.checked) == action.checked
            return Observation(status="ok" if ok else "failed",
                               evidence="ticked" if ok else "not ticked")
        if isinstance(action, Click):
            return _after_click(before, after, ref)
        return Observation(status="uncertain", evidence="not checked")


class ModelCheck:
    """Settles an ``uncertain`` observation by asking a model (one small call) whether
    the page now shows what the step meant to do: yes, no or uncertain.

    The call goes through ``ChatModel`` (its retries and counting), so an outage raises
    ``ModelUnavailable`` like every other model call, never a portal error.
    """

    def __init__(self, chat: ChatModel) -> None:
        self.chat = chat
        self.calls = 0

    def settle(self, step: Step, before: View, after: View, seen: Observation,
               masked: Any = str) -> Observation:
        if seen.status != "uncertain":
            return seen
        self.calls += 1
        content = (f"目的：{masked(step.thought)}\n操作：{masked(step.action.model_dump_json())}\n"
                   f"操作前：\n{masked(before.digest())}\n操作后：\n{masked(after.digest())}")
        reply = self.chat.complete([{"role": "system", "content": AGENT_CHECK},
                                    {"role": "user", "content": content}])
        answer = (reply.content or "").strip().lower()[:20]
        status = {"yes": "ok", "no": "failed"}.get(answer, "uncertain")
        return Observation(status=status, evidence=f"{seen.evidence}; the model says {answer}"
                           [:200])


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
