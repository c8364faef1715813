"""Draw a manifest form's page as HTML in one of several styles other sites use.

A form's ``layout`` decides the frame of each row:

- ``table``: a two-column table, the label in the left cell (as many Chinese
  government forms and old sites do);
- ``bootstrap``: ``div.mb-3`` rows with ``form-label``/``form-control``/``form-check``;
- ``plain``: one ``<p>`` per control, label text then ``<br>``;
- ``dl``: a definition list, the label in ``<dt>``;
- ``govuk``: GOV.UK design-system groups (hint text, fieldsets, day/month/year dates);
- ``grid``: ``div.row`` with a label column and an input column.

``labels`` (per form, overridable per control) says how the label is tied to the
control: ``for`` (``<label for>``), ``wrap`` (the control inside its label), ``text`` (text
beside it, not tied), ``placeholder`` (no label, a placeholder), ``aria`` (``aria-label``
only), ``labelledby`` (``aria-labelledby`` to a span), ``fieldset`` (groups: a legend).
A radio or checkbox group's options are labelled ``for``, ``wrap`` or ``bare`` (text after
the input, no label). ``js`` draws the form after load (``load``), 1.5 s after it with no
request in between (``delay``: only waiting for controls finds it), or from a request
the site answers after ``FETCH_DELAY`` (``fetch``: waiting for the network finds it).
"""

from __future__ import annotations

import json
from html import escape

from tests.forms_foreign.manifest import DATE_PARTS, GROUPS, Control, Form

_CSS = {
    "table": "table.f{border-collapse:collapse}table.f td,table.f th{border:1px solid #999;"
    "padding:6px}table.f th{background:#eef;text-align:right;font-weight:normal}",
    "bootstrap": ".mb-3{margin-bottom:1rem}.form-label{display:block;font-weight:500}"
    ".form-control,.form-select{display:block;width:24rem;padding:.375rem}"
    ".form-check{display:block}.form-text{color:#666;font-size:.875em}"
    ".btn{padding:.4rem 1rem}.btn-primary{background:#0d6efd;color:#fff}",
    "plain": "p{margin:.8em 0}",
    "dl": "dt{font-weight:bold;margin-top:.6em}dd{margin-left:1em}",
    "govuk": ".govuk-form-group{margin-bottom:20px}.govuk-label,.govuk-fieldset__legend{"
    "font-weight:bold;display:block}.govuk-hint{color:#505a5f}"
    ".govuk-date-input__item{display:inline-block;margin-right:12px}"
    ".govuk-button{background:#00703c;color:#fff;padding:8px 12px;border:0}",
    "grid": ".row{display:flex;margin:6px 0}.col-label{width:10em;text-align:right;"
    "padding-right:8px}.col-input{flex:1}",
}


def _id(c: Control, suffix: str = "") -> str:
    return f"fld-{c.name}{suffix}"


def _required(form: Form, c: Control) -> bool:
    return form.required if c.required is None else c.required


def _mode(form: Form, c: Control) -> str:
    mode = c.labels or form.labels
    if c.kind in GROUPS and mode == "for":
        return "fieldset"  # a group's label is its legend in "for" forms
    if c.kind not in GROUPS and c.kind != "date-parts" and mode == "fieldset":
        return "for"
    return mode


def _star(form: Form, c: Control) -> str:
    return ' <span class="req" aria-hidden="true">*</span>' if _required(form, c) else ""


def _attrs(form: Form, c: Control, mode: str, *, extra: str = "") -> str:
    out = f'id="{_id(c)}" name="{escape(c.name)}"'
    if _required(form, c):
        out += " required"
    if mode == "aria" and c.label:
        out += f' aria-label="{escape(c.label)}"'
    if mode == "labelledby":
        out += f' aria-labelledby="{_id(c, "-l")}"'
    placeholder = c.placeholder or (c.label if mode == "placeholder" else "")
    if placeholder and c.kind not in ("select", "multiselect"):
        out += f' placeholder="{escape(placeholder)}"'
    if c.hint and form.layout in ("govuk", "bootstrap"):
        out += f' aria-describedby="{_id(c, "-hint")}"'
    css = {
        "bootstrap": "form-select" if c.kind in ("select", "multiselect") else "form-control",
        "govuk": "govuk-input",
    }.get(form.layout)
    if css:
        out += f' class="{css}"'
    return out + extra


def _options(c: Control, mode: str) -> str:
    out = []
    empty = c.empty_option
    if empty == "__auto__":
        empty = c.label if mode == "placeholder" else ""
    if empty is not None and c.kind == "select":
        if mode == "placeholder":
            empty = empty or c.label
        text = empty or "-- 请选择 --"
        out.append(f'<option value="">{escape(text)}</option>')
    for o in c.options:
        selected = " selected" if c.default == o.value else ""
        out.append(f'<option value="{escape(o.value)}"{selected}>{escape(o.label)}</option>')
    return "".join(out)


def _group(form: Form, c: Control, mode: str) -> str:
    """The inputs of a radio or checkbox group, each option labelled as ``option_labels``."""
    kind = "radio" if c.kind == "radio" else "checkbox"
    items = []
    for i, o in enumerate(c.options):
        oid = _id(c, f"-{i}")
        checked = " checked" if c.default == o.value else ""
        req = " required" if _required(form, c) and kind == "radio" else ""
        css = {"bootstrap": ' class="form-check-input"'}.get(form.layout, "")
        inp = (
            f'<input type="{kind}" id="{oid}" name="{escape(c.name)}" '
            f'value="{escape(o.value)}"{checked}{req}{css}>'
        )
        text = escape(o.label)
        if c.option_labels == "wrap":
            item = f"<label>{inp} {text}</label>"
        elif c.option_labels == "bare":
            item = f"{inp} {text}"
        else:
            item = f'{inp} <label for="{oid}">{text}</label>'
        if form.layout == "bootstrap":
            item = f'<div class="form-check">{item}</div>'
        elif form.layout == "govuk":
            item = f'<div class="govuk-radios__item">{item}</div>'
        else:
            item = f'<span class="opt">{item}</span>&nbsp;&nbsp;'
        items.append(item)
    body = "\n".join(items)
    if mode == "aria":
        return (
            f'<div role="{"radiogroup" if kind == "radio" else "group"}" '
            f'aria-label="{escape(c.label)}">{body}</div>'
        )
    if mode == "labelledby":
        return (
            f'<div role="{"radiogroup" if kind == "radio" else "group"}" '
            f'aria-labelledby="{_id(c, "-l")}">{body}</div>'
        )
    return f'<div class="group">{body}</div>'


def _date_parts(form: Form, c: Control) -> str:
    words = {"zh": ("日", "月", "年"), "en": ("Day", "Month", "Year")}[form.lang]
    parts = []
    for part, word in zip(DATE_PARTS, words, strict=True):
        pid = _id(c, f"-{part}")
        width = 4 if part == "year" else 2
        parts.append(
            f'<div class="govuk-date-input__item"><label for="{pid}">{word}</label> '
            f'<input id="{pid}" name="{c.name}-{part}" inputmode="numeric" '
            f'size="{width}" class="govuk-input"></div>'
        )
    return "".join(parts)


def _control(form: Form, c: Control, mode: str) -> str:
    """The control's own markup, without its label."""
    if c.kind in GROUPS:
        return _group(form, c, mode)
    if c.kind == "date-parts":
        return _date_parts(form, c)
    if c.kind == "textarea":
        return (
            f'<textarea {_attrs(form, c, mode)} rows="3" cols="40">'
            f"{escape(c.default or '')}</textarea>"
        )
    if c.kind in ("select", "multiselect"):
        multiple = ' multiple size="5"' if c.kind == "multiselect" else ""
        return f"<select {_attrs(form, c, mode)}{multiple}>{_options(c, mode)}</select>"
    if c.kind == "checkbox":
        checked = " checked" if c.default else ""
        return f'<input type="checkbox" {_attrs(form, c, mode)} value="{escape(c.value)}"{checked}>'
    value = f' value="{escape(c.default)}"' if c.default else ""
    return f'<input type="{c.kind}" {_attrs(form, c, mode)}{value}>'


def _hint(form: Form, c: Control) -> str:
    if not c.hint:
        return ""
    css = {"govuk": "govuk-hint", "bootstrap": "form-text"}.get(form.layout, "hint")
    return f' <div id="{_id(c, "-hint")}" class="{css}">{escape(c.hint)}</div>'


def _label(form: Form, c: Control, mode: str) -> str:
    """The visible label (empty when the mode has none)."""
    text = escape(c.label) + _star(form, c) if c.label else ""
    if not text or mode in ("placeholder", "aria"):
        return ""
    if mode == "labelledby":
        return f'<span id="{_id(c, "-l")}">{text}</span>'
    if mode == "for" and c.kind not in GROUPS and c.kind != "date-parts":
        css = {"bootstrap": ' class="form-label"', "govuk": ' class="govuk-label"'}.get(
            form.layout, ""
        )
        return f'<label for="{_id(c)}"{css}>{text}</label>'
    css = {"bootstrap": ' class="form-label"'}.get(form.layout, ' class="lbl"')
    return f"<span{css}>{text}</span>"


def row(form: Form, c: Control) -> str:
    """One control with its label, in the form's layout."""
    mode = _mode(form, c)
    control = _control(form, c, mode)
    hint = _hint(form, c)
    if mode == "fieldset" and (c.kind in GROUPS or c.kind == "date-parts"):
        legend = f"<legend>{escape(c.label)}{_star(form, c)}</legend>"
        inner = f"<fieldset>{legend}{hint}{control}</fieldset>"
        if form.layout == "table":
            return f'<tr><td colspan="2">{inner}</td></tr>'
        if form.layout == "govuk":
            return f'<div class="govuk-form-group">{inner}</div>'
        if form.layout == "bootstrap":
            return f'<div class="mb-3">{inner}</div>'
        return f"<div>{inner}</div>"
    if mode == "wrap" and c.kind not in GROUPS:
        label = f"<label>{escape(c.label)}{_star(form, c)} {control}</label>"
        control, labelled = label, ""
    else:
        labelled = _label(form, c, mode)
    if form.layout == "table":
        return f"<tr><th>{labelled}</th><td>{control}{hint}</td></tr>"
    if form.layout == "bootstrap":
        return f'<div class="mb-3">{labelled}{control}{hint}</div>'
    if form.layout == "govuk":
        return f'<div class="govuk-form-group">{labelled}{hint}{control}</div>'
    if form.layout == "dl":
        return f"<dt>{labelled}</dt><dd>{control}{hint}</dd>"
    if form.layout == "grid":
        return (
            f'<div class="row"><div class="col-label">{labelled}</div>'
            f'<div class="col-input">{control}{hint}</div></div>'
        )
    sep = "<br>" if labelled else ""
    return f"<p>{labelled}{sep}{control}{hint}</p>"


def _consent(form: Form) -> str:
    assert form.consent is not None
    c = form.consent
    req = " required" if form.required else ""
    inp = f'<input type="checkbox" id="fld-{c.name}" name="{c.name}" value="{c.value}"{req}>'
    if form.layout == "table":
        return (
            f'<tr><td colspan="2">{inp} <label for="fld-{c.name}">{escape(c.label)}'
            f"</label></td></tr>"
        )
    return f'<div class="consent">{inp} <label for="fld-{c.name}">{escape(c.label)}</label></div>'


def _button(text: str, tag: str, action: str, css: str) -> str:
    if tag == "input":
        return f'<input type="submit" name="action" value="{escape(text)}"{css}>'
    if tag == "input-novalue":
        return '<input type="submit">'
    if tag == "div":  # a scripted "button" (a div with a role), as some SPA sites do
        return (
            f'<div role="button" tabindex="0" class="btn" '
            f"onclick=\"this.closest('form').requestSubmit()\">{escape(text)}</div>"
        )
    return f'<button type="submit" name="action" value="{action}"{css}>{escape(text)}</button>'


def buttons(form: Form, page: int) -> str:
    b = form.buttons
    css = {"bootstrap": ' class="btn btn-primary"', "govuk": ' class="govuk-button"'}.get(
        form.layout, ""
    )
    out = []
    if b.back and page > 1:
        out.append(
            f'<button type="submit" name="action" value="back" formnovalidate>'
            f"{escape(b.back)}</button>"
        )
    if b.save:
        out.append(
            f'<button type="submit" name="action" value="save" formnovalidate>'
            f"{escape(b.save)}</button>"
        )
    if page < len(form.pages):
        if b.next_tag == "link":  # a link that submits, styled as a button
            out.append(
                f'<a href="#" class="btn" onclick="this.closest(\'form\').requestSubmit();'
                f'return false">{escape(b.next)}</a>'
            )
        else:
            out.append(_button(b.next, b.next_tag, "next", css))
    else:
        out.append(_button(b.submit, b.submit_tag, "submit", css))
    if b.reset:
        out.append(f'<input type="reset" value="{escape(b.reset)}">')
    if b.cancel:
        out.append(f'<a href="/">{escape(b.cancel)}</a>')
    return '<div class="actions">' + " ".join(out) + "</div>"


def form_markup(form: Form, page: int, action: str, notice: str = "") -> str:
    """The ``<form>`` of ``page`` (1-based), posting to ``action``."""
    spec = form.pages[page - 1]
    if spec.html:
        notice = f'<div class="notice">{escape(notice)}</div>' if notice else ""
        return notice + spec.markup.replace("{action}", action)
    rows = "\n".join(row(form, c) for c in spec.controls)
    if form.consent is not None and page == len(form.pages):
        rows += "\n" + _consent(form)
    if form.layout == "table":
        rows = f'<table class="f">{rows}</table>'
    elif form.layout == "dl":
        rows = f"<dl>{rows}</dl>"
    heading = f"<h2>{escape(spec.heading)}</h2>" if spec.heading else ""
    steps = ""
    if len(form.pages) > 1:
        steps = (
            f'<p class="steps">第 {page} 步，共 {len(form.pages)} 步</p>'
            if form.lang == "zh"
            else f'<p class="steps">Step {page} of {len(form.pages)}</p>'
        )
    intro = f"<p>{escape(spec.intro)}</p>" if spec.intro else ""
    notice = f'<div class="notice">{escape(notice)}</div>' if notice else ""
    novalidate = " novalidate" if form.novalidate else ""
    return (
        f'{notice}{steps}{heading}{intro}<form method="post" action="{action}"{novalidate}>'
        f"\n{rows}\n{buttons(form, page)}\n</form>"
    )


# Every change to a control sends the form's current values to ``snapshot_url``: what a
# filler left in the controls is known even when it never submits. The request is
# synchronous, so the site has it before the filler's action returns.
_SNAPSHOT = (
    "<script>(function(){{function snap(){{var f=document.querySelector('main form');"
    "if(!f)return;try{{var x=new XMLHttpRequest();x.open('POST',{url},false);"
    "x.send(new FormData(f));}}catch(e){{}}}}"
    "document.addEventListener('input',snap,true);"
    "document.addEventListener('change',snap,true);}})();</script>"
)


def page_html(
    form: Form,
    page: int,
    action: str,
    *,
    fragment_url: str = "",
    snapshot_url: str = "",
    notice: str = "",
) -> str:
    """A whole page: the site's frame around the form, drawn at once or by script."""
    markup = form_markup(form, page, action, notice)
    loading = "加载中…" if form.lang == "zh" else "Loading…"
    if form.js == "none":
        body = markup
    elif form.js == "load":
        body = (
            f'<div id="app"></div><script>document.addEventListener("DOMContentLoaded",'
            f'function(){{document.getElementById("app").innerHTML={json.dumps(markup)};}});'
            f"</script>"
        )
    elif form.js == "delay":
        body = (
            f'<div id="app"><p>{loading}</p></div><script>window.addEventListener("load",'
            f'function(){{setTimeout(function(){{document.getElementById("app").innerHTML='
            f"{json.dumps(markup)};}},1500);}});</script>"
        )
    else:  # fetch: the markup comes from a second, slow request (the site answers it late)
        body = (
            f'<div id="app"><p>{loading}</p></div><script>fetch({json.dumps(fragment_url)})'
            f".then(function(r){{return r.text();}}).then(function(t){{"
            f'document.getElementById("app").innerHTML=t;}});</script>'
        )
    site = "政务服务网" if form.lang == "zh" else "Online services"
    nav = (
        '<a href="/">首页</a> | <a href="/help">办事指南</a> | <a href="/login">登录</a>'
        if form.lang == "zh"
        else '<a href="/">Home</a> | <a href="/help">Help</a> | <a href="/login">Sign in</a>'
    )
    lang = "zh-CN" if form.lang == "zh" else "en"
    return (
        f'<!doctype html><html lang="{lang}"><head><meta charset="utf-8">'
        f"<title>{escape(form.title)} - {site}</title>"
        f"<style>body{{font-family:sans-serif;margin:20px}}{_CSS[form.layout]}</style>"
        f"</head><body><header><strong>{site}</strong> <nav>{nav}</nav></header>"
        f"<main><h1>{escape(form.title)}</h1>\n{body}\n</main>"
        f"{_SNAPSHOT.format(url=json.dumps(snapshot_url)) if snapshot_url else ''}"
        f"<footer><small>© 2026</small></footer></body></html>"
    )


def done_html(form: Form, text: str) -> str:
    title = "提交成功" if form.lang == "zh" else "Application complete"
    return (
        f'<!doctype html><html><head><meta charset="utf-8"><title>{title}</title></head>'
        f"<body><main><h1>{title}</h1><p>{escape(text)}</p></main></body></html>"
    )
