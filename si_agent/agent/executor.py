"""The executor, the agent's hands: pure Playwright, no AI. It turns an action on a
ref (or a 0-1000 point) into a browser action, with a timeout per action, and puts
the task's values in for their ``{{key}}`` placeholders: a decider never has to
see them. A value typed into a date, time, month or number input is first put in
the form that input takes (``si_agent.form_values.typed``)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from si_agent.agent.models import Check, Click, Finish, Input, Scroll, Select, Step, Wait
from si_agent.dom import LABELS_JS
from si_agent.form_values import typed

# An input's type and what the page says of the form its value takes.
_TYPE_JS = "(el) => {" + LABELS_JS + """
  return [(el.getAttribute("type") || "").toLowerCase(), hintOf(el)];
}"""

_PLACEHOLDER = re.compile(r"\{\{(\w+)\}\}")


def fill_in(text: str, values: Mapping[str, str]) -> str:
    """``text`` with each ``{{key}}`` replaced by the value; an unknown key is an
    error (never typed into a form as it stands)."""
    def value(m: re.Match[str]) -> str:
        if m.group(1) not in values:
            raise KeyError(f"no value {m.group(1)!r} in this task")
        return values[m.group(1)]

    return _PLACEHOLDER.sub(value, text)


class ActionRunner:
    """Performs one step's action on the page."""

    def __init__(self, timeout_ms: float = 10_000) -> None:
        self.timeout_ms = timeout_ms

    def perform(self, page: Any, step: Step, values: Mapping[str, str]) -> None:
        action = step.action
        if isinstance(action, Finish):
            return
        if isinstance(action, Wait):
            page.wait_for_timeout(action.seconds * 1000)
            return
        if isinstance(action, Scroll):
            page.mouse.wheel(0, 600 if action.direction == "down" else -600)
            return
        if action.ref is None and action.point is not None:
            self._at_point(page, action, values)
            return
        target = page.locator(f"aria-ref={action.ref}")
        options = {"timeout": self.timeout_ms}
        if isinstance(action, Click):
            target.click(**options)
            page.wait_for_load_state(timeout=self.timeout_ms)
        elif isinstance(action, Input):
            text = fill_in(action.text, values)
            kind, hint = target.evaluate(_TYPE_JS, timeout=self.timeout_ms)
            shaped = typed(kind, text, hint)
            if shaped is None:
                raise ValueError(f"the value is no {kind}")
            target.fill(shaped, **options)
        elif isinstance(action, Select):
            labels = [fill_in(o, values) for o in (action.option, *action.also)]
            target.select_option(label=labels if action.also else labels[0], **options)
        elif isinstance(action, Check):
            target.set_checked(action.checked, **options)

    def _at_point(self, page: Any, action: Any, values: Mapping[str, str]) -> None:
        size = page.viewport_size or {"width": 1280, "height": 720}
        x, y = (action.point[0] * size["width"] / 1000, action.point[1] * size["height"] / 1000)
        page.mouse.click(x, y)
        if isinstance(action, Input):
            page.keyboard.type(fill_in(action.text, values))
        page.wait_for_load_state(timeout=self.timeout_ms)
