"""Decision, the agent's brain: from the goal, the current View and the memory of
steps taken, choose one next action (a ``Step``).

- ``FormPolicy`` is deterministic and offline. It fills known values into
  controls whose label fits, chooses options by their wording, ticks required
  consents, presses 下一步 or submit, follows a link to the form when there is
  none, reads the result, and ends with what is missing when it cannot go on.
- ``ModelDecider`` asks any OpenAI-compatible endpoint for a ``Step`` (the pydantic
  schema as the one tool it must call) through the project's ``ChatModel``: its
  retries, request counting and ``ModelUnavailable`` when the model is down (so
  an outage is reported as the model's, not the portal's). The model sees values
  only as ``{{key}}`` placeholders, and the page with those values masked the
  same way.

Any class with ``decide(goal, view, memory) -> Step`` is a decider.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any, Protocol

from si_agent.agent import texts
from si_agent.agent.models import (
    Check,
    Click,
    Element,
    Finish,
    Goal,
    Input,
    Record,
    Select,
    Step,
    View,
)
from si_agent.config.settings import Settings
from si_agent.engine.chat import ChatModel
from si_agent.engine.prompts import AGENT_SYSTEM
from si_agent.errors import ModelUnavailable
from si_agent.form_values import as_list, typed
from si_agent.labels import (
    Button,
    assign,
    best_option,
    button_meaning,
    logs_in,
    lone_submit,
    normalize,
    repeats,
)
from si_agent.privacy import redact_text
from si_agent.session.model import Usage

_CONSENT = re.compile(r"同意|承诺|已阅读|知晓|agree|accept|consent|certify|confirm", re.I)
_LOGIN = "login"  # a login page's button: pressed by the policy, never a submission
_PLACEHOLDER = re.compile(r"\{\{(\w+)\}\}")
_FORCE_NEXT_STEP = {"type": "function", "function": {"name": "next_step"}}
_FIELD_CONTROLS = frozenset({"textbox", "combobox", "listbox", "radio", "checkbox",
                             "spinbutton", "searchbox"})


class Decider(Protocol):
    def decide(self, goal: Goal, view: View, memory: Sequence[Record]) -> Step: ...



class FormPolicy:
    """A deterministic decider for forms (see the module docstring)."""

    def decide(self, goal: Goal, view: View, memory: Sequence[Record]) -> Step:
        found = re.search(goal.success, view.summary)
        if found:
            output = {k: v for k, v in found.groupdict().items() if v}
            return Step(thought="结果页显示了受理编号", action=Finish(success=True, output=output))
        controls = [e for e in view.elements if e.role in _FIELD_CONTROLS and e.enabled]
        refused = self._refused(goal, controls, memory)
        if refused is not None:
            return refused
        for element, key in self._targets(goal, controls):
            unfit = self._unfit(element, key, goal, controls)
            if unfit is not None:
                return unfit
            step = self._fill(element, key, goal, controls)
            if step is not None and not _failed_before(step, memory):
                return step
        missing = self._missing(goal, controls)
        if missing:
            return Step(thought="必填项没有可填写的值", action=Finish(
                success=False, missing=missing, message="缺少：" + "、".join(missing)))
        for e in controls:
            if e.role == "checkbox" and e.required and not e.checked and _CONSENT.search(e.name):
                return Step(thought=f"勾选必填的{e.name}", action=Check(ref=e.ref))
        for wanted in (Button.NEXT, Button.SUBMIT, _LOGIN):
            button = next((e for e in view.elements if e.role == "button" and e.enabled
                           and button_role(e, view, goal) == wanted), None)
            if button is None:
                continue
            if wanted == Button.SUBMIT and _submitted_without_answer(memory):
                # Pressed already and the site said neither yes nor which value is
                # wrong: pressing again could apply twice.
                return Step(thought="提交后网站没有给出结果", action=Finish(
                    success=False, unknown=True, message="已提交，但网站没有给出结果，请勿重复提交"))
            return Step(thought=f"点击“{button.name}”", action=Click(ref=button.ref))
        link = next((e for e in view.elements if e.role == "link" and goal.target
                     and goal.target in e.name), None)
        if link is not None and not controls:
            return Step(thought=f"从菜单进入“{link.name}”", action=Click(ref=link.ref))
        if not controls and memory and isinstance(memory[-1].step.action, Click):
            # An error page after pressing a button: whether it took effect is unknown,
            # so pressing again could apply twice. Say what the site said.
            return Step(thought="网站返回了错误页面", action=Finish(
                success=False, unknown=memory[-1].submitted,
                message=view.title.split(" - ")[0] or view.summary[:60]))
        return Step(thought="页面上没有可以继续的操作",
                    action=Finish(success=False, message="未找到要办理的表单或提交按钮"))

    def _targets(self, goal: Goal, controls: list[Element]) -> list[tuple[Element, str]]:
        """Controls (a radio or checkbox group once) paired with the value key whose
        labels fit, else its own name among the controls left (``labels.assign``:
        never two controls for one key, except a control
        asking again for a value, ``labels.repeats``), in page order."""
        units = _units(controls)
        names = [name for _, name in units]
        # The labels first; a key's own name ("worked") only for the keys they place
        # nowhere, among the controls left: as a rival it would make a long question
        # that one of the labels fits ambiguous.
        found = assign({k: goal.labels[k] for k in goal.values if goal.labels.get(k)}, names)
        taken = {m.index: key for key, m in found.matches.items()}
        free = [i for i in range(len(units)) if i not in taken]
        rest = assign({k: [k, *goal.labels.get(k, [])] for k in goal.values
                       if k not in found.matches}, [names[i] for i in free])
        taken |= {free[m.index]: key for key, m in rest.matches.items()}
        # A control asking again for a value ("Confirm email address") takes it too.
        taken |= {i: key for i, key in repeats(names, taken).items()
                  if units[i][0].role in ("textbox", "searchbox")}
        return [(units[index][0], key) for index, key in sorted(taken.items())]

    def _fill(self, e: Element, key: str, goal: Goal, controls: list[Element]) -> Step | None:
        value = goal.values[key]
        text = goal.text(key)
        if e.role == "radio":
            group = _members(e, controls)
            label = best_option([r.name for r in group], text)
            choice = next((r for r in group if r.name == label), None)
            if choice is None or choice.checked:
                return None
            return Step(thought=f"{e.group}选“{choice.name}”", action=Check(ref=choice.ref))
        if e.role == "checkbox" and e.group:  # a checkbox group takes a list
            group = _members(e, controls)
            names = {best_option([r.name for r in group], item) for item in as_list(value)}
            for box in group:
                if bool(box.checked) != (box.name in names):
                    return Step(thought=f"{e.group}{'勾选' if box.name in names else '取消'}"
                                        f"“{box.name}”",
                                action=Check(ref=box.ref, checked=box.name in names))
            return None
        if e.role == "listbox":  # a select taking several options
            labels, values = e.choices()
            chosen = [o for o in (best_option(labels, item, values) for item in as_list(value))
                      if o]
            if not chosen or set(e.value.split("、")) == set(chosen):
                return None
            return Step(thought=f"{e.name}选“{'、'.join(chosen)}”",
                        action=Select(ref=e.ref, option=chosen[0], also=chosen[1:]))
        if e.role == "combobox":
            labels, values = e.choices()
            option = best_option(labels, text, values)
            if option is None or e.value == option:
                return None
            return Step(thought=f"{e.name}选“{option}”", action=Select(ref=e.ref, option=option))
        if e.role == "checkbox":
            wanted = text.lower() in ("true", "1", "是", "yes")
            if bool(e.checked) == wanted:
                return None
            return Step(thought=f"勾选{e.name}", action=Check(ref=e.ref, checked=wanted))
        shown = typed(e.input_type, text, e.hint) or text  # a date input shows 2025-03-01
        if e.value.replace(" ", "") == shown.replace(" ", ""):
            return None  # an error on it is the form refusing the value: see _refused
        return Step(thought=f"填写{e.name}", action=Input(ref=e.ref, text="{{" + key + "}}"))

    def _refused(self, goal: Goal, controls: list[Element],
                 memory: Sequence[Record]) -> Step | None:
        """After a submit the form refused values it was given: nothing to retry."""
        last = memory[-1] if memory else None
        if last is None or not isinstance(last.step.action, Click):
            return None
        keys = dict((normalize(e.group or e.name), k) for e, k in self._targets(goal, controls))
        refused = [e for e in controls if e.error and normalize(e.group or e.name) in keys
                   and self._fill(e, keys[normalize(e.group or e.name)], goal, controls) is None]
        if not refused:
            return None
        failed = {keys[normalize(e.group or e.name)]: e.error or "" for e in refused}
        return Step(thought="表单拒绝了已填写的值", action=Finish(
            success=False, failed=failed,
            message="；".join(f"{e.group or e.name}：{e.error}" for e in refused)))

    def _unfit(self, e: Element, key: str, goal: Goal, controls: list[Element]) -> Step | None:
        """A value no option of its select, radio or checkbox group means, or none of a
        date or number input's type: say so before sending."""
        values = None
        if e.role == "radio" or (e.role == "checkbox" and e.group):
            names = [r.name for r in _members(e, controls)]
        elif e.role in ("combobox", "listbox"):
            names, values = e.choices()
        elif e.role in ("textbox", "spinbutton") and typed(
                e.input_type, goal.text(key), e.hint) is None:
            return Step(thought=f"{e.name}只能填写{e.input_type}", action=Finish(
                success=False, failed={key: f"网站上这一项只能填写{e.input_type}格式"},
                message=f"{e.name}无法填写所给的内容"))
        else:
            return None
        items = as_list(goal.values[key]) if e.role in ("listbox", "checkbox") else [
            goal.text(key)]
        unfit = [item for item in items if best_option(names, item, values) is None]
        if not names or not unfit:
            return None
        return Step(thought=f"{e.group or e.name}没有“{unfit[0]}”这个选项", action=Finish(
            success=False, failed={key: f"网站上只能选择：{'、'.join(names)}"},
            message=f"{e.group or e.name}没有可选的“{unfit[0]}”"))

    def _missing(self, goal: Goal, controls: list[Element]) -> list[str]:
        filled = {normalize(e.group or e.name) for e, _ in self._targets(goal, controls)}
        missing = []
        for e in controls:
            name = e.group or e.name
            if e.required and normalize(name) not in filled and name not in missing \
                    and _empty(e, controls):
                missing.append(name)
        return missing


def button_role(e: Element, view: View, goal: Goal | None = None) -> str | None:
    """What pressing button ``e`` does: ``Button.NEXT`` or ``Button.SUBMIT`` by its
    words (``labels.button_meaning``, the goal's ``next``/``submit`` names first), the
    form's one submit button whatever its words, "login" for 登录; else None."""
    names = {"next_names": goal.next, "submit_names": goal.submit} if goal else {}
    meant = button_meaning(e.name, **names)
    if meant is not None:
        return meant
    if logs_in(e.name):
        return _LOGIN
    submits = [b for b in view.elements if b.role == "button" and b.submits and b.enabled
               and button_meaning(b.name, **names) is None]
    one = lone_submit([b.name for b in submits])
    if e.submits and one is not None and submits[one] == e and not any(
            button_meaning(b.name, **names) for b in view.elements if b.role == "button"):
        return Button.SUBMIT
    return None


def presses_submit(step: Step, view: View, goal: Goal | None = None) -> bool:
    """``step`` clicks a button of the page that submits (提交申请, Submit, the form's
    lone submit button…, not 下一步 or 登录)."""
    ref = getattr(step.action, "ref", None)
    element = view.element(ref) if isinstance(step.action, Click) and ref else None
    if element is None or element.role != "button":
        return False
    return button_role(element, view, goal) == Button.SUBMIT


def placed(goal: Goal, view: View, memory: Sequence[Record]) -> set[str]:
    """Keys of ``goal.values`` in a control: typed, chosen or ticked by a step not
    observed failing (on any page so far), or shown already by a control of this
    page whose label fits."""
    done: set[str] = set()
    for record in memory:
        action = record.step.action
        if record.observation.status == "failed":
            continue
        if isinstance(action, Input):
            done |= set(_PLACEHOLDER.findall(action.text)) & goal.values.keys()
        elif isinstance(action, Select | Check):
            wanted = {key: [key, *goal.labels.get(key, [])] for key in goal.values}
            found = assign(wanted, [record.group or record.target])
            done |= set(found.matches)
    policy = FormPolicy()
    controls = [e for e in view.elements if e.role in _FIELD_CONTROLS and e.enabled]
    for element, key in policy._targets(goal, controls):
        if (policy._unfit(element, key, goal, controls) is None
                and policy._fill(element, key, goal, controls) is None):
            done.add(key)
    return done


def _units(controls: list[Element]) -> list[tuple[Element, str]]:
    """The controls as a person fills them, with their labels: a radio group or a
    checkbox group once (by its group label), any other control by its name."""
    units, seen = [], set()
    for e in controls:
        if e.role == "radio" or (e.role == "checkbox" and e.group):
            if (e.role, e.group) in seen:
                continue
            seen.add((e.role, e.group))
            units.append((e, e.group or e.name))
        else:
            units.append((e, e.name))
    return units


def _members(e: Element, controls: list[Element]) -> list[Element]:
    """The radios or checkboxes of ``e``'s group."""
    return [r for r in controls if r.role == e.role and r.group == e.group]


def _empty(e: Element, controls: list[Element]) -> bool:
    """A required control nobody filled (a consent is ticked by the policy itself)."""
    if e.role == "radio":
        return not any(r.checked for r in controls if r.role == "radio" and r.group == e.group)
    if e.role == "checkbox":
        return not e.checked and not _CONSENT.search(e.name)
    return not e.value


def _submitted_without_answer(memory: Sequence[Record]) -> bool:
    """A submit was pressed and no field error came back from it."""
    submits = [r for r in memory if r.submitted]
    return bool(submits) and submits[-1].observation.status != "failed"


def _failed_before(step: Step, memory: Sequence[Record]) -> bool:
    """The same action failed twice already: do not try it a third time."""
    same = [r for r in memory if r.step.action == step.action and r.observation.status == "failed"]
    return len(same) >= 2


# -- a model --------------------------------------------------------------------------

class ModelDecider:
    """A ``Step`` from an OpenAI-compatible model, one call per step.

    ``calls`` counts the HTTP requests sent (retries included) and ``usage`` sums
    what they cost; ``decide`` raises ``ModelUnavailable`` when the model cannot
    answer.
    """

    def __init__(self, chat: ChatModel) -> None:
        self.chat = chat
        self.usage = Usage()
        self.calls = 0
        self.prompt_chars = 0

    @classmethod
    def from_settings(cls, settings: Settings) -> ModelDecider:
        """The SI_LLM_* model (any OpenAI-compatible endpoint), at temperature 0: a
        form is filled the same way every time."""
        return cls(ChatModel(settings.model_copy(update={"llm_temperature": 0.0})))

    def decide(self, goal: Goal, view: View, memory: Sequence[Record]) -> Step:
        messages = [{"role": "system", "content": AGENT_SYSTEM},
                    {"role": "user", "content": _user_content(goal, view, memory)}]
        if view.screenshot:
            messages[1]["content"] = [
                {"type": "text", "text": messages[1]["content"]},
                {"type": "image_url",
                 "image_url": {"url": f"data:image/jpeg;base64,{view.screenshot}"}}]
        tool = {"type": "function", "function": {
            "name": "next_step", "description": "The one next action.",
            "parameters": Step.model_json_schema()}}
        for _ in range(2):  # a reply that is no valid step is asked again once
            self.prompt_chars += len(json.dumps(messages, ensure_ascii=False))
            try:
                reply = self.chat.complete(messages, [tool], tool_choice=_FORCE_NEXT_STEP)
            except ModelUnavailable as exc:
                self._spent(exc.usage)
                raise
            self._spent(reply.usage)
            calls = reply.tool_calls
            try:
                return Step.model_validate_json(calls[0].arguments)
            except (IndexError, ValueError) as exc:
                problem = "no next_step call" if not calls else str(exc).splitlines()[0]
                messages = [*messages, {"role": "user",
                                        "content": f"上一次的回复无效（{problem}），请调用 next_step。"}]
        return Step(thought=texts.NO_VALID_STEP_THOUGHT, action=Finish(
            success=False, message=texts.NO_VALID_STEP))

    def _spent(self, usage: Usage) -> None:
        self.calls += usage.model_calls
        self.usage = self.usage + usage


def _user_content(goal: Goal, view: View, memory: Sequence[Record]) -> str:
    placeholders = "\n".join(
        f"{{{{{k}}}}}：{'、'.join(goal.labels.get(k, [])[:3]) or k}" for k in goal.values)
    steps = "\n".join(f"{i + 1}. {r.step.model_dump_json(exclude={'thought'})} → "
                      f"{r.observation.status}（{mask_values(r.observation.evidence, goal)}）"
                      for i, r in enumerate(memory[-12:])) or "（无）"
    return (f"任务：{mask_values(goal.task, goal)}\n可填写的值（占位符：含义）：\n{placeholders}\n\n"
            f"当前页面：\n{mask_values(view.digest(), goal)}\n页面文字：{mask_values(view.summary, goal)}"
            f"\n\n已执行的步骤：\n{steps}")


def mask_values(text: str, goal: Goal) -> str:
    """``text`` with every value of the task replaced by its placeholder, also when the
    page spaces or dashes it ("3301 2219…", "138-0013-8001") or changes its case,
    and any other ID, phone or bank-card number masked."""
    said = [(key, item) for key, value in goal.values.items()
            for item in ([value] if isinstance(value, str) else value)]
    for key, value in sorted(said, key=lambda kv: -len(kv[1])):
        if len(value) >= 2 and value.lower() not in ("true", "false"):
            spaced = r"[\s-]?".join(re.escape(c) for c in value)
            text = re.sub(spaced, "{{" + key + "}}", text, flags=re.IGNORECASE)
    return redact_text(text)


def mask_tree(data: Any, goal: Goal) -> Any:
    """``mask_values`` on every string of a JSON-shaped structure (never on its text)."""
    if isinstance(data, str):
        return mask_values(data, goal)
    if isinstance(data, dict):
        return {k: mask_tree(v, goal) for k, v in data.items()}
    if isinstance(data, list):
        return [mask_tree(v, goal) for v in data]
    return data
