"""Perception, the agent's eyes: a page becomes a ``View``.

- ``DomPerception`` reads Playwright's accessibility snapshot for AI
  (``aria_snapshot(mode="ai", boxes=True)``): each element with its role, name,
  state and box, and a ref the executor finds it again by
  (``page.locator("aria-ref=e12")``). The DOM then adds what the snapshot leaves
  out: whether a control is required, its value and the error announced for it.
- ``ScreenshotPerception`` adds a JPEG of the viewport, base64, for a multimodal
  model; alone it gives no elements, and the decider acts on points.
- ``Combined`` merges several (the DOM's elements with the screenshot).

Any class with ``perceive(page) -> View`` is a perception.
"""

from __future__ import annotations

import base64
import re
from typing import Any, Protocol

from si_agent.agent.models import Element, View
from si_agent.dom import LABELS_JS, settled

INTERACTIVE = frozenset({"textbox", "combobox", "listbox", "radio", "checkbox", "button",
                         "link", "spinbutton", "searchbox"})
_LINE = re.compile(r'^(?P<indent>\s*)- (?P<role>[\w-]+)(?: "(?P<name>(?:[^"\\]|\\.)*)")?'
                   r'(?P<attrs>(?: \[[^\]]*\])*)(?::\s*(?P<text>.*))?$')
_ATTR = re.compile(r"\[([\w-]+)(?:=([^\]]*))?\]")
SUMMARY_CHARS = 1200
_CONTROLS = "input:not([type=hidden]), select, textarea"

# What the snapshot does not say, read from the element itself: whether it is
# required, its value, its error, its type, and the label and group the page gives
# it (si_agent.dom) where the accessible name is missing or only a placeholder.
_DETAILS_JS = "(el) => {" + LABELS_JS + """
  const text = (n) => (n ? (n.innerText || n.textContent || "").trim() : "");
  const type = (el.getAttribute("type") || "").toLowerCase();
  if (el.matches("button, input[type=submit], input[type=image], input[type=button], [role=button]")) {
    const form = el.form || el.closest("form");
    const kind = type || (el.tagName === "BUTTON" ? "submit" : "");
    return {submits: !!form && (kind === "submit" || kind === "image") && _fillable(form)};
  }
  const ids = (el.getAttribute("aria-describedby") || "").split(/\\s+/).filter(Boolean);
  const invalid = el.getAttribute("aria-invalid") === "true";
  const members = (type === "radio" || type === "checkbox") && el.name
    ? [...document.getElementsByName(el.name)].filter((r) => r.type === type) : [el];
  return {
    required: !!el.required || el.getAttribute("aria-required") === "true",
    value: ["checkbox", "radio", "password"].includes(el.type) ? "" : (el.value || ""),
    error: invalid ? ids.map((id) => text(document.getElementById(id))).join(" ") : null,
    input_type: type,
    hint: hintOf(el),
    options: el.tagName === "SELECT"
      ? [...el.options].map((o) => [(o.innerText || o.textContent || "").trim(), o.value]) : [],
    label: labelOf(el),
    placeholder: (el.getAttribute("placeholder") || "").trim(),
    group: type === "radio" || (type === "checkbox" && members.length > 1) ? groupOf(members) : "",
  };
}
"""


class Perception(Protocol):
    def perceive(self, page: Any) -> View: ...


class DomPerception:
    """Elements from the accessibility snapshot, completed from the DOM."""

    def perceive(self, page: Any) -> View:
        if page.locator(_CONTROLS).count() == 0:  # a form its scripts have yet to build
            settled(page)
        snapshot = page.locator("body").aria_snapshot(mode="ai", boxes=True)
        size = page.viewport_size or {"width": 1280, "height": 720}
        elements, texts = parse_snapshot(snapshot, size["width"], size["height"])
        return View(url=page.url, title=page.title(), summary=_shorten(" ".join(texts)),
                    elements=tuple(e.model_copy(update=_details(page, e)) for e in elements))


class ScreenshotPerception:
    """The viewport as a JPEG for a model that reads images."""

    def __init__(self, quality: int = 60) -> None:
        self.quality = quality

    def perceive(self, page: Any) -> View:
        # What was typed is painted over: the model reads the page, not the values.
        image = page.screenshot(type="jpeg", quality=self.quality, mask=[form_values(page)])
        return View(url=page.url, title=page.title(),
                    screenshot=base64.b64encode(image).decode("ascii"))


class Combined:
    """Several perceptions as one View: the first's elements and text, any screenshot."""

    def __init__(self, *parts: Perception) -> None:
        self.parts = parts

    def perceive(self, page: Any) -> View:
        views = [p.perceive(page) for p in self.parts]
        first = views[0]
        shot = next((v.screenshot for v in views if v.screenshot), None)
        elements = next((v.elements for v in views if v.elements), ())
        summary = next((v.summary for v in views if v.summary), "")
        return first.model_copy(update={"screenshot": shot, "elements": elements,
                                        "summary": summary})


def form_values(page: Any) -> Any:
    """The controls whose contents a screenshot must not show."""
    return page.locator("input:not([type=checkbox]):not([type=radio]):not([type=submit]),"
                        " textarea, select")


def parse_snapshot(snapshot: str, width: int, height: int) -> tuple[list[Element], list[str]]:
    """The interactive elements of an AI aria snapshot, and its visible texts."""
    elements: list[Element] = []
    texts: list[str] = []
    owner: tuple[int, dict] | None = None  # a combobox or listbox collecting its options
    groups: list[tuple[int, str]] = []  # enclosing groups (a fieldset's legend names it)
    for line in snapshot.splitlines():
        m = _LINE.match(_unquoted(line))
        if m is None:
            continue
        indent, role = len(m["indent"]), m["role"]
        name = (m["name"] or "").replace('\\"', '"')
        attrs = dict(_ATTR.findall(m["attrs"] or ""))
        while groups and groups[-1][0] >= indent:
            groups.pop()
        if role in ("group", "radiogroup") and name:
            groups.append((indent, name))
        if role == "option" and owner is not None and indent > owner[0]:
            owner[1]["options"].append(name)
            if "selected" in attrs and name != "请选择":  # a listbox may have several
                before = owner[1]["value"] if owner[1]["role"] == "listbox" else ""
                owner[1]["value"] = f"{before}、{name}" if before else name
            continue
        if role not in INTERACTIVE and role != "option" and (m["text"] or name):
            texts.append(m["text"] or name)  # a result may be in any element's text
        if role not in INTERACTIVE or "ref" not in attrs:
            continue
        entry = {"ref": attrs["ref"], "role": role, "name": name, "value": m["text"] or "",
                 "group": groups[-1][1] if groups and role == "radio" else "",
                 "enabled": "disabled" not in attrs, "options": [],
                 "checked": ("checked" in attrs) if role in ("checkbox", "radio") else None,
                 "box": _box(attrs.get("box"), width, height)}
        if role in ("combobox", "listbox"):
            owner = (indent, entry)
        elements.append(entry)
    return [Element(**{**e, "options": tuple(e["options"])}) for e in elements], texts


def _unquoted(line: str) -> str:
    """A snapshot line whose key YAML had to quote (``- 'heading "受理编号: SI…"'``)."""
    m = re.match(r"^(\s*)- '(.*)'(:.*)?$", line)
    return f"{m[1]}- {m[2].replace(chr(39) * 2, chr(39))}{m[3] or ''}" if m else line


def _box(raw: str | None, width: int, height: int) -> tuple[int, int, int, int] | None:
    if not raw:
        return None
    x, y, w, h = (float(v) for v in raw.split(","))
    if w <= 0 or h <= 0:
        return None
    return (round(x * 1000 / width), round(y * 1000 / height),
            round(w * 1000 / width), round(h * 1000 / height))


def _details(page: Any, element: Element) -> dict:
    found = page.locator(f"aria-ref={element.ref}").evaluate(_DETAILS_JS)
    if element.role in ("button", "link"):
        return {"submits": bool(found.get("submits"))}
    said = found.pop("label")
    placeholder = found.pop("placeholder")
    value_of = dict(found.pop("options"))
    if element.options:
        found["option_values"] = tuple(value_of.get(o, o) for o in element.options)
    # The page's own label where the accessible name is none or only the placeholder
    # (a table cell or the text before the control names it).
    if said["label"] and (not element.name or (
            element.name == placeholder and said["source"] == "text")):
        found["name"] = said["label"]
    if element.group or not found["group"]:
        found.pop("group")  # a fieldset's legend, as the snapshot has it
    if element.role in ("combobox", "listbox") and element.value and found["value"]:
        found["value"] = element.value  # the option's text, not its value attribute
    # (an empty value attribute is the "--请选择--" placeholder: nothing chosen)
    return found


def _shorten(text: str) -> str:
    text = re.sub(r"\s+", " ", text).strip()
    return text if len(text) <= SUMMARY_CHARS else text[:SUMMARY_CHARS] + "…"
