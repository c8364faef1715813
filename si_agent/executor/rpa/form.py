"""Reading a web form the way a screen reader does, and matching it to a business.

``perceive(page)`` lists the form's controls with what the page says of each: its
label as ``si_agent.dom`` reads it (``aria-labelledby``, ``aria-label``, its
``<label>``, the text or table cell before it, its placeholder; a radio or
checkbox group's ``<legend>`` or the text before the group), control kind and
input type, whether it is required, its options, its current value, and the error
announced for it (``aria-invalid="true"`` with the text of ``aria-describedby``).
Radios sharing a name are one control; so are checkboxes sharing a name (a
checkbox group, for a list value), and day, month and year boxes side by side (one
date, ``dateparts``). With ``settle`` it first waits, bounded, for a
form built by JavaScript.

``pair`` matches business fields with those controls (``labels.assign``: folded
text, containment, token similarity, with a margin so one value never takes two
controls), by the business's explicit ``fields`` mapping for the keys it names,
else the field's own label and the staff-editable synonyms in
``si_agent/data/rpa_synonyms.yaml``; it says which rule matched each. ``choose``
picks a select, radio or checkbox option for a value, by label or value, through
the enum's aliases.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from importlib import resources
from typing import Any, Literal

import yaml
from pydantic import BaseModel

from si_agent.config.model import Business, FieldDef
from si_agent.dom import LABELS_JS, settled
from si_agent.labels import Assignment, assign, best_option, fold, normalize

Kind = Literal["text", "date", "select", "radio", "checkbox", "checkboxes", "textarea",
               "dateparts"]

# One entry per control (a radio group, or checkboxes sharing a name, is one control);
# run in the page. Labels as si_agent.dom reads them.
_PERCEIVE_JS = "() => {" + LABELS_JS + """
  const text = (el) => (el ? el.innerText || el.textContent || "" : "").trim();
  const errorOf = (el) => {
    if (el.getAttribute("aria-invalid") !== "true") return null;
    const ids = (el.getAttribute("aria-describedby") || "").split(/\\s+/).filter(Boolean);
    const said = ids.map((id) => text(document.getElementById(id))).filter(Boolean);
    return said.join(" ") || "";
  };
  const visible = (el) => el.getClientRects().length > 0 || el.type === "radio"
    || el.type === "checkbox";  // a styled radio or checkbox may hide its box
  const optionOf = (el) => ({value: el.value, label: labelOf(el).label || el.value});
  const out = [];
  const elements = {};  // out's index -> the element of a single control
  const PARTS = {day: ["day", "日", "dd"], month: ["month", "月", "mm"], year: ["year", "年", "yyyy"]};
  const groups = new Set();
  for (const el of document.querySelectorAll("input, select, textarea")) {
    const type = (el.getAttribute("type") || el.tagName).toLowerCase();
    if (["hidden", "submit", "button", "reset", "image", "password", "file"].includes(type)) continue;
    if (el.disabled || !visible(el)) continue;
    const members = (type === "radio" || type === "checkbox") && el.name
      ? [...document.getElementsByName(el.name)].filter((r) => r.type === type && !r.disabled)
      : [el];
    if (type === "radio" || (type === "checkbox" && members.length > 1)) {
      if (groups.has(type + ":" + el.name)) continue;
      groups.add(type + ":" + el.name);
      const invalid = members.find((r) => r.getAttribute("aria-invalid") === "true") || el;
      out.push({
        key: type + ":" + el.name, kind: type === "radio" ? "radio" : "checkboxes",
        label: groupOf(members), source: "group", input_type: type,
        required: members.some((r) => r.required || r.getAttribute("aria-required") === "true"),
        options: members.map(optionOf),
        value: members.filter((r) => r.checked).map((r) => r.value).join("\\n"),
        error: errorOf(invalid),
      });
      continue;
    }
    const kind = el.tagName === "SELECT" ? "select" : el.tagName === "TEXTAREA" ? "textarea"
      : type === "checkbox" ? "checkbox" : type === "date" ? "date" : "text";
    const named = labelOf(el);
    out.push({
      key: el.id ? "id:" + el.id : "name:" + el.name, kind,
      label: named.label, source: named.source, input_type: type, hint: hintOf(el),
      multiple: kind === "select" && el.multiple,
      required: el.required || el.getAttribute("aria-required") === "true",
      options: kind === "select"
        ? [...el.options].filter((o) => o.value && !o.disabled)
            .map((o) => ({value: o.value, label: text(o)}))
        : [],
      value: kind === "checkbox" ? (el.checked ? "true" : "") : el.value || "",
      error: errorOf(el),
    });
    elements[out.length - 1] = el;
  }
  // Day, month and year boxes side by side (GOV.UK's date input, 年/月/日): one date.
  const partOf = (c) => c && c.kind === "text" && c.source !== "name"
    && Object.keys(PARTS).find((p) => PARTS[p].includes(c.label.toLowerCase().replace(/[^\\p{L}]/gu, "")));
  const merged = [];
  for (let i = 0; i < out.length; i++) {
    const run = out.slice(i, i + 3);
    const parts = run.map(partOf);
    if (run.length === 3 && parts.every(Boolean) && new Set(parts).size === 3) {
      const members = run.map((c, n) => elements[i + n]);
      const byPart = Object.fromEntries(parts.map((p, n) => [p, run[n]]));
      merged.push({
        key: "parts:" + run.map((c) => c.key).join("|"), kind: "dateparts",
        label: groupOf(members), source: "group", input_type: "dateparts",
        hint: run.map((c) => c.hint).join(" "),
        required: run.some((c) => c.required),
        parts: ["day", "month", "year"].map((p) => byPart[p].key),
        value: ["year", "month", "day"].every((p) => byPart[p].value)
          ? ["year", "month", "day"].map((p) => byPart[p].value).join("-") : "",
        error: run.map((c) => c.error).find((e) => e !== null) ?? null,
      });
      i += 2;
      continue;
    }
    merged.push(out[i]);
  }
  return merged;
}
"""


class Choice(BaseModel):
    value: str
    label: str


class Control(BaseModel):
    """One form control as the accessibility tree presents it."""

    key: str  # "id:<id>", "name:<name>", "radio:<group name>" or "checkbox:<group name>"
    kind: Kind
    label: str
    source: str = "label"  # where the label was read (si_agent.dom's labelOf)
    input_type: str = ""  # the input's type attribute (date, time, number...) or its tag
    hint: str = ""  # what the page says of the form of its value (dom's hintOf)
    multiple: bool = False  # a select that takes several options
    required: bool = False
    options: list[Choice] = []
    parts: list[str] = []  # a date in day, month and year boxes: their keys, in that order
    value: str = ""
    error: str | None = None  # the message announced for it, when it is invalid

    @property
    def name(self) -> str:
        """The label as shown: no spaces, asterisks, colons or required marks."""
        return normalize(self.label)

    @property
    def folded(self) -> str:
        """The label as compared (``labels.fold``)."""
        return fold(self.label)

    def selector(self, key: str | None = None) -> str:
        kind, _, ident = (key or self.key).partition(":")
        if kind in ("radio", "checkbox"):
            return f'input[type="{kind}"][name="{css(ident)}"]'
        if kind == "name":
            return f'[name="{css(ident)}"]'
        return f'[id="{css(ident)}"]'



def css(value: str) -> str:
    """``value`` quoted for a CSS attribute selector."""
    return value.replace("\\", "\\\\").replace('"', '\\"')


def perceive(page: Any, *, settle: bool = False) -> list[Control]:
    """The controls of the page's form, in document order (``settle``: first wait,
    bounded, for a page built by JavaScript to show them: ``dom.settled``)."""
    if settle:
        settled(page)
    return [Control.model_validate(c) for c in page.evaluate(_PERCEIVE_JS)]


@functools.cache
def synonyms() -> dict[str, tuple[str, ...]]:
    """Field key -> other labels forms use (si_agent/data/rpa_synonyms.yaml)."""
    text = resources.files("si_agent").joinpath("data/rpa_synonyms.yaml").read_text("utf-8")
    return {key: tuple(normalize(x) for x in labels)
            for key, labels in (yaml.safe_load(text) or {}).items()}


def pair(business: Business, controls: list[Control],
         explicit: Mapping[str, str]) -> tuple[dict[str, Control], Assignment]:
    """Business field key -> the control that takes its value, and how each was found
    (``labels.assign``: the business's ``fields`` mapping alone for the keys it names,
    else the field's label and its synonyms)."""
    wanted = {f.key: [explicit[f.key]] if f.key in explicit else [f.label, *synonyms().get(
        f.key, ())] for f in business.fields}
    found = assign(wanted, [c.label for c in controls])
    return {key: controls[m.index] for key, m in found.matches.items()}, found


def match(business: Business, controls: list[Control],
          explicit: Mapping[str, str]) -> dict[str, Control]:
    """Business field key -> the control that takes its value (see ``pair``)."""
    return pair(business, controls, explicit)[0]


def choose(field: FieldDef | None, control: Control, value: str) -> Choice | None:
    """The option of a select, radio group or checkbox group meaning ``value``: its
    label or value, folded (case, width, punctuation), then through the enum's
    aliases, then by wording and containment (``labels.best_option``)."""
    said = {fold(value)}
    wordings = {value}  # as written: an English value's words count (best_option)
    if field is not None:
        for option in field.options:
            names = {fold(option.value), *(fold(a) for a in option.aliases)}
            if said & names:
                said |= names
                wordings |= {option.value, *option.aliases}
    for choice in control.options:
        if {fold(choice.label), fold(choice.value)} & said:
            return choice
    labels = [c.label for c in control.options]
    values = [c.value for c in control.options]
    for name in sorted(wordings, key=len, reverse=True):
        label = best_option(labels, name, values)
        if label is not None:
            return next(c for c in control.options if c.label == label)
    return None
