"""What a page calls its controls, read in the page by JavaScript shared by the rpa
executor's form reader (``executor.rpa.form``) and the agent's ``DomPerception``.

``LABELS_JS`` defines, inside a script that embeds it:

- ``labelOf(el)`` -> ``{label, source}``: the control's name, from the first of
  ``aria-labelledby``, ``aria-label``, its ``<label>`` (without the text of
  controls inside it), the nearest text before it up to the previous control (a
  table cell or a ``<dt>`` beside it, "Name: <input>"), its ``placeholder``, its
  ``title``, its ``name``; ``source`` says which;
- ``hintOf(el)`` -> what the page says of the form its value takes (its label,
  placeholder, title and description: "DD/MM/YYYY");
- ``groupOf(members)`` -> the label of a radio group or checkbox group (its
  ``<legend>``, a ``radiogroup``/``group`` element's name, else the text before
  the first member, as for one control);
- ``settled(page)`` (Python) waits, bounded, until a page rendered by JavaScript
  shows its controls.
"""

from __future__ import annotations

from typing import Any

LABELS_JS = r"""
const _LONGEST = 160;  // longer text before a control is a paragraph, not its label
const _text = (n) => (n ? (n.innerText || n.textContent || "") : "").replace(/\s+/g, " ").trim();
const _isControl = (n) => n.nodeType === 1 && n.matches(
  "input:not([type=hidden]), select, textarea, button");
const _meaningful = (t) => /[\p{L}\p{N}]/u.test(t.replace(/[(（]\s*(必填|必选|选填|required|optional)\s*[)）]/gi, ""));
const _ownText = (label) => {
  const copy = label.cloneNode(true);
  copy.querySelectorAll("input, select, textarea, button, option, script, style").forEach((n) => n.remove());
  return _text(copy);
};
const _byIds = (el, attr) => (el.getAttribute(attr) || "").split(/\s+/).filter(Boolean)
  .map((id) => _text(document.getElementById(id))).filter(Boolean).join(" ");
// The nearest meaningful text before el, up to the previous control (not one of
// own) or a heading: a table cell, a <dt>, "Name: <input>".
const _textBefore = (el, own) => {
  const root = el.closest("form") || document.body;
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_ELEMENT | NodeFilter.SHOW_TEXT);
  walker.currentNode = el;
  let n;
  while ((n = walker.previousNode())) {
    if (n.nodeType === 1) {
      if (_isControl(n) && !own.includes(n)) return "";
      if (n.matches("h1, h2, h3, h4, h5, h6, legend")) return "";
      continue;
    }
    const parent = n.parentElement;
    if (!parent || parent.closest("script, style, option, select, textarea, button")) continue;
    const label = parent.closest("label");
    if (label && label.control && !own.includes(label.control)) continue;
    if (label && own.length > 1 && own.includes(label.control)) continue;  // a member's own
    const t = n.textContent.replace(/\s+/g, " ").trim();
    if (!_meaningful(t)) continue;
    let prev = n.previousSibling;
    while (prev && prev.nodeType === 3 && !prev.textContent.trim()) prev = prev.previousSibling;
    if (prev && prev.nodeType === 1 && prev.matches("input[type=radio], input[type=checkbox]")
        && !own.includes(prev)) return "";  // a bare option's own text
    return t.length <= _LONGEST ? t : "";
  }
  return "";
};
// The text right after a radio or checkbox that no <label> names ("<input> 工人"), up
// to the next control.
const _textAfter = (el) => {
  const root = el.closest("form") || document.body;
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_ELEMENT | NodeFilter.SHOW_TEXT);
  walker.currentNode = el;
  let n;
  while ((n = walker.nextNode())) {
    if (n.nodeType === 1) {
      if (_isControl(n) || n.matches("br, p, div, li, tr, td, th, dt, dd")) {
        if (_isControl(n)) return "";
        continue;
      }
      continue;
    }
    const parent = n.parentElement;
    if (!parent || parent.closest("script, style, option, select, textarea, button")) continue;
    const label = parent.closest("label");
    if (label && label.control && label.control !== el) return "";
    const t = n.textContent.replace(/\s+/g, " ").trim();
    if (_meaningful(t)) return t.length <= _LONGEST ? t : "";
  }
  return "";
};
// A table laid out with its labels in the row above the controls ("姓名 | 身份证号"
// over a row of inputs): the cell of the row above at the control's column.
const _columnOf = (cell) => {
  let at = 0;
  for (const c of cell.parentElement.cells) {
    if (c === cell) return at;
    at += c.colSpan || 1;
  }
  return at;
};
const _headerAbove = (el) => {
  const cell = el.closest("td, th");
  const row = cell && cell.parentElement;
  if (!row || !row.parentElement) return "";
  if (_meaningful(_ownText(cell))) return "";  // the cell names the control itself
  const rows = [...row.parentElement.children].filter((r) => r.tagName === "TR");
  const above = rows[rows.indexOf(row) - 1];
  if (!above || above.querySelector("input, select, textarea")) return "";
  if (above.cells.length < 2 && row.cells.length > 1) return "";
  const column = _columnOf(cell);
  for (const c of above.cells) {
    if (_columnOf(c) === column) {
      const t = _text(c);
      return _meaningful(t) && t.length <= _LONGEST ? t : "";
    }
  }
  return "";
};
// A select's first option with no value, when it says what to choose ("请选择提取原因").
const _promptOption = (el) => {
  if (el.tagName !== "SELECT" || !el.options.length || el.options[0].value) return "";
  const t = _text(el.options[0]).replace(/^[-\s—]*(请选择|选择|please\s+select|select|choose)?[:：\s]*/i, "")
    .replace(/[-\s—]*$/, "");
  return _meaningful(t) ? t : "";
};
// A form a person fills in (a logout form's lone button submits none).
const _fillable = (form) => !!form.querySelector(
  "input:not([type=hidden]):not([type=submit]):not([type=button]):not([type=image]), select, textarea");
const labelOf = (el) => {
  const said = _byIds(el, "aria-labelledby");
  if (said) return {label: said, source: "aria-labelledby"};
  const aria = (el.getAttribute("aria-label") || "").trim();
  if (aria) return {label: aria, source: "aria-label"};
  const label = el.labels && [...el.labels].map(_ownText).find(Boolean);
  if (label) return {label, source: "label"};
  const type = (el.getAttribute("type") || "").toLowerCase();
  if (type !== "checkbox" && type !== "radio") {
    const header = _headerAbove(el);
    if (header) return {label: header, source: "column"};
    const before = _textBefore(el, [el]);
    if (before) return {label: before, source: "text"};
    const prompt = _promptOption(el);
    if (prompt) return {label: prompt, source: "option"};
  } else {
    const after = _textAfter(el);
    if (after) return {label: after, source: "text"};
  }
  const hint = (el.getAttribute("placeholder") || "").trim();
  if (hint) return {label: hint, source: "placeholder"};
  const title = (el.getAttribute("title") || "").trim();
  if (title) return {label: title, source: "title"};
  return {label: el.getAttribute("name") || el.id || "", source: "name"};
};
// What the page says of the form a control's value takes: its label, placeholder,
// title and description ("DD/MM/YYYY", "e.g. 15-05-1990").
const hintOf = (el) => [labelOf(el).label, el.getAttribute("placeholder"), el.getAttribute("title"),
  _byIds(el, "aria-describedby")].filter(Boolean).join(" ");
const groupOf = (members) => {
  const first = members[0];
  const fieldset = first.closest("fieldset");
  const legend = fieldset && fieldset.querySelector("legend");
  if (legend && _text(legend)) return _text(legend);
  const group = first.closest("[role=radiogroup], [role=group]");
  if (group) {
    const said = _byIds(group, "aria-labelledby") || (group.getAttribute("aria-label") || "").trim();
    if (said) return said;
  }
  return _textBefore(first, members) || first.name || "";
};
"""

SETTLE_MS = 3000  # at most this long for a page's scripts to show its controls
_STEADY_MS = 150  # controls counted again after this, until the count holds
_CONTROLS = "input:not([type=hidden]), select, textarea"


def settled(page: Any, timeout_ms: float = SETTLE_MS) -> int:
    """Wait (at most about ``timeout_ms``) until the page shows its controls and their
    number holds: a form built by JavaScript after load. The number of controls."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    controls = page.locator(_CONTROLS)
    if controls.count() == 0:
        try:
            page.wait_for_selector(_CONTROLS, state="attached", timeout=timeout_ms)
        except PlaywrightTimeout:  # a page without a form (a result, an error page)
            return 0
    count, waited = controls.count(), 0.0
    while waited < timeout_ms:
        page.wait_for_timeout(_STEADY_MS)
        waited += _STEADY_MS
        now = controls.count()
        if now == count:
            break
        count = now
    return count
