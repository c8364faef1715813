"""Reading a web form the way a screen reader does, and matching it to a business.

``perceive(page)`` lists the form's controls with what the accessibility tree
exposes for each: its label (``<label for>``, a radio group's ``<legend>``,
``aria-label``), control kind, whether it is required, its options, its current
value, and the error announced for it (``aria-invalid="true"`` with the text of
``aria-describedby``). ``match`` pairs business fields with those controls: the
business's explicit ``fields`` mapping first, then the field's own label, then
the staff-editable synonyms in ``si_agent/data/rpa_synonyms.yaml``. ``choose``
picks a select or radio option for a value, through the enum's aliases.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from importlib import resources
from typing import Any, Literal

import yaml
from pydantic import BaseModel

from si_agent.config.model import Business, FieldDef
from si_agent.labels import best_option, normalize

Kind = Literal["text", "date", "select", "radio", "checkbox", "textarea"]

# One entry per control (a radio group is one control); run in the page.
_PERCEIVE_JS = """
() => {
  const text = (el) => (el ? el.innerText || el.textContent || "" : "").trim();
  const errorOf = (el) => {
    if (el.getAttribute("aria-invalid") !== "true") return null;
    const ids = (el.getAttribute("aria-describedby") || "").split(/\\s+/).filter(Boolean);
    const said = ids.map((id) => text(document.getElementById(id))).filter(Boolean);
    return said.join(" ") || "";
  };
  const out = [];
  const groups = new Set();
  for (const el of document.querySelectorAll("input, select, textarea")) {
    const type = (el.getAttribute("type") || el.tagName).toLowerCase();
    if (["hidden", "submit", "button", "reset", "image", "password"].includes(type)) continue;
    if (el.disabled) continue;
    if (type === "radio") {
      if (groups.has(el.name)) continue;
      groups.add(el.name);
      const radios = [...document.getElementsByName(el.name)];
      const fieldset = el.closest("fieldset");
      const invalid = radios.find((r) => r.getAttribute("aria-invalid") === "true") || el;
      out.push({
        key: "radio:" + el.name, kind: "radio",
        label: text(fieldset && fieldset.querySelector("legend")) || el.name,
        required: radios.some((r) => r.required),
        options: radios.map((r) => ({value: r.value, label: text(r.labels && r.labels[0]) || r.value})),
        value: (radios.find((r) => r.checked) || {}).value || "",
        error: errorOf(invalid),
      });
      continue;
    }
    const kind = el.tagName === "SELECT" ? "select" : el.tagName === "TEXTAREA" ? "textarea"
      : type === "checkbox" ? "checkbox" : type === "date" ? "date" : "text";
    out.push({
      key: el.id ? "id:" + el.id : "name:" + el.name, kind,
      label: text(el.labels && el.labels[0]) || el.getAttribute("aria-label") || el.name,
      required: el.required || el.getAttribute("aria-required") === "true",
      options: kind === "select"
        ? [...el.options].filter((o) => o.value).map((o) => ({value: o.value, label: text(o)}))
        : [],
      value: kind === "checkbox" ? (el.checked ? "true" : "") : el.value || "",
      error: errorOf(el),
    });
  }
  return out;
}
"""


class Choice(BaseModel):
    value: str
    label: str


class Control(BaseModel):
    """One form control as the accessibility tree presents it."""

    key: str  # "id:<element id>" or "radio:<group name>": how to find it again
    kind: Kind
    label: str
    required: bool = False
    options: list[Choice] = []
    value: str = ""
    error: str | None = None  # the message announced for it, when it is invalid

    @property
    def name(self) -> str:
        """The label as matched: no spaces, asterisks or colons."""
        return normalize(self.label)

    def selector(self) -> str:
        kind, _, ident = self.key.partition(":")
        if kind == "radio":
            return f'input[type="radio"][name="{css(ident)}"]'
        if kind == "name":
            return f'[name="{css(ident)}"]'
        return f'[id="{css(ident)}"]'



def css(value: str) -> str:
    """``value`` quoted for a CSS attribute selector."""
    return value.replace("\\", "\\\\").replace('"', '\\"')


def perceive(page: Any) -> list[Control]:
    """The controls of the page's form, in document order."""
    return [Control.model_validate(c) for c in page.evaluate(_PERCEIVE_JS)]


@functools.cache
def synonyms() -> dict[str, tuple[str, ...]]:
    """Field key -> other labels forms use (si_agent/data/rpa_synonyms.yaml)."""
    text = resources.files("si_agent").joinpath("data/rpa_synonyms.yaml").read_text("utf-8")
    return {key: tuple(normalize(x) for x in labels)
            for key, labels in (yaml.safe_load(text) or {}).items()}


def match(business: Business, controls: list[Control],
          explicit: Mapping[str, str]) -> dict[str, Control]:
    """Business field key -> the control that takes its value."""
    by_name: dict[str, Control] = {}
    for control in controls:
        by_name.setdefault(control.name, control)
    found: dict[str, Control] = {}
    for f in business.fields:
        names = [normalize(explicit[f.key])] if f.key in explicit else [
            normalize(f.label), *synonyms().get(f.key, ())]
        match = next((by_name[n] for n in names if n in by_name), None)
        if match is not None and match not in found.values():
            found[f.key] = match
    return found


def choose(field: FieldDef | None, control: Control, value: str) -> Choice | None:
    """The option of a select or radio group meaning ``value`` (its label or value,
    exactly, then through the enum's aliases, then by containment)."""
    said = {normalize(value)}
    if field is not None:
        for option in field.options:
            names = {normalize(option.value), *(normalize(a) for a in option.aliases)}
            if said & names:
                said |= names
    for choice in control.options:
        if {normalize(choice.label), normalize(choice.value)} & said:
            return choice
    labels = [c.label for c in control.options]
    for name in sorted(said, key=len, reverse=True):  # then by wording (labels.best_option)
        label = best_option(labels, name)
        if label is not None:
            return next(c for c in control.options if c.label == label)
    return None
