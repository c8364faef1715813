"""Run the two form fillers on the foreign-form suite and score what the site received.

- ``businesses(forms, base, directory)`` writes each form's business as a YAML file
  (``api: kind: rpa`` with ``url``, ``fixed`` for the consent, ``submit``/``next`` naming
  the buttons and ``success`` reading the reference, as staff would) and loads them with
  the project's loader: the businesses are checked as any other;
- ``run_rpa`` runs ``RpaExecutor`` on one form, ``run_agent`` the browser agent with
  ``FormPolicy`` (the values and labels the executor's hand-over gives it: the field's
  label and the synonyms), each returning a ``Run``;
- ``tables`` prints the per-kind, per-form and total tables.

A run's verdict per gold value (``manifest.check``) on its final values (what the server
received, or for a form never submitted what its controls held at the end, which the
page reports on every change): right, wrong (something else), or left out (nothing). A **silent loss** is a
run reporting success while a gold value was left out and the filler did not report it
(the rpa executor: not 未填写/填写失败 in its per-field table ``fields.json``; the agent:
not in ``unplaced`` or ``failed``).
"""

from __future__ import annotations

import json
import statistics
import sys
import time
import uuid
from collections import defaultdict
from pathlib import Path
from typing import Any

import httpx
import yaml
from pydantic import BaseModel

from tests.forms_foreign.manifest import FieldResult, Form, check, strays, success_pattern
from tests.forms_foreign.server import create_app, serving

REPORTED = ("未填写", "填写失败")  # per-field statuses that tell a value did not go in


class Run(BaseModel):
    """One filler on one form."""

    form_id: str
    filler: str
    reported_success: bool
    submitted: bool
    fields: list[FieldResult]
    reported: list[str] = []  # keys the filler said it did not place
    strays: list[str] = []  # controls that take no value but got one
    steps: int = 0
    seconds: float = 0.0
    detail: str = ""

    @property
    def right(self) -> int:
        return sum(f.right for f in self.fields)

    @property
    def fully_right(self) -> bool:
        return self.submitted and all(f.right for f in self.fields)

    @property
    def wrong(self) -> list[str]:
        return [f.key for f in self.fields if not f.right and not f.empty]

    @property
    def left_out(self) -> list[str]:
        return [f.key for f in self.fields if f.empty and not f.right]

    @property
    def silent(self) -> list[str]:
        """Values left out while the run reported success without naming them."""
        if not self.reported_success:
            return []
        return [k for k in self.left_out if k not in self.reported]


# -- businesses ------------------------------------------------------------------------------


def business_doc(form: Form, base: str) -> dict[str, Any]:
    """The business YAML a citizen service would write for ``form`` (as a dict)."""
    fields = []
    for f in form.business.fields:
        entry: dict[str, Any] = {
            "key": f.key,
            "label": f.label,
            "type": f.type,
            "prompt": f"请提供{f.label}。",
            "required": True,
        }
        if f.options:
            entry["options"] = [
                {"value": o.value, **({"aliases": o.aliases} if o.aliases else {})}
                for o in f.options
            ]
            entry["prompt"] = f"请选择{f.label}。"
        fields.append(entry)
    options: dict[str, Any] = {
        "url": f"{base}/f/{form.id}",
        "action_timeout": 5,
        "job_timeout": 120,
    }
    b = form.buttons
    if b.submit_tag != "input-novalue":
        options["submit"] = b.submit
    if len(form.pages) > 1:
        options["next"] = b.next
    if form.success:
        options["success"] = form.success
    if form.consent is not None:
        options["fixed"] = {form.consent.label: True}
    return {
        "id": form.id,
        "name": form.business.name,
        "type": "handle",
        "description": form.goal,
        "keywords": [form.business.name],
        "fields": fields,
        "require_confirm": True,
        "api": {
            "kind": "rpa",
            "options": options,
            "result_template": "已提交，编号：{application_no}。",
        },
    }


def businesses(forms: list[Form], base: str, directory: Path) -> dict[str, Any]:
    """Each form's business, written under ``directory`` and loaded by the project's loader."""
    from si_agent.config.loader import load_businesses

    directory.mkdir(parents=True, exist_ok=True)
    for form in forms:
        text = yaml.safe_dump(business_doc(form, base), allow_unicode=True, sort_keys=False)
        (directory / f"{form.id}.yaml").write_text(f"# {form.title}\n{text}", "utf-8")
    return load_businesses(directory)


def _received(base: str, run: str) -> tuple[dict[str, list[str]] | None, bool, str]:
    """The run's final values: what its submitted application received, else what its
    last draft's controls held (posts and the page's snapshots)."""
    apps = httpx.get(f"{base}/_admin/runs/{run}", timeout=10).json()
    if not apps:
        return None, False, "the form was never opened"
    done = [a for a in apps if a["submitted"]]
    detail = f"{len(done)} submissions" if len(done) > 1 else ""
    if done:
        return done[-1]["received"], True, detail
    return apps[-1]["current"], False, detail


# -- the rpa executor ----------------------------------------------------------------------------


def run_rpa(executor: Any, executors: Any, business: Any, form: Form, base: str) -> Run:
    """``RpaExecutor.run`` on ``form`` with the gold values."""
    from si_agent.errors import ExecutorError
    from si_agent.executor import JobContext

    run = uuid.uuid4().hex[:10]
    options = executors.options(business)
    options = options.model_copy(update={"url": f"{options.url}?run={run}"})
    job_id = f"{form.id}-{run}"
    started = time.perf_counter()
    success, detail = False, ""
    try:
        executor.run(
            business,
            form.gold,
            idempotency_key=uuid.uuid4().hex,
            options=options,
            job=JobContext(id=job_id),
        )
        success = True
    except ExecutorError as exc:
        detail = exc.message + (
            " " + json.dumps(exc.field_errors, ensure_ascii=False) if exc.field_errors else ""
        )
    seconds = time.perf_counter() - started
    trace = executor.trace_dir / job_id
    reported: list[str] = []
    table = trace / "fields.json"
    if table.is_file():
        reported = [
            f["key"]
            for f in json.loads(table.read_text("utf-8"))
            if f.get("status") in REPORTED and f.get("key")
        ]
    log = trace / "actions.log"
    steps = len(log.read_text("utf-8").splitlines()) if log.is_file() else 0
    received, submitted, more = _received(base, run)
    return Run(
        form_id=form.id,
        filler="rpa",
        reported_success=success,
        submitted=submitted,
        fields=check(form, received),
        strays=strays(form, received),
        reported=reported,
        steps=steps,
        seconds=seconds,
        detail="; ".join(x for x in (detail, more) if x),
    )


# -- the browser agent ---------------------------------------------------------------------------


def goal(form: Form, business: Any) -> Any:
    """The goal the rpa hand-over would give the agent: values, every known label, the
    fixed consent; the values must be placed before the submit."""
    from pydantic import ValidationError

    from si_agent.agent import Goal
    from si_agent.testing.agent_suite import default_labels

    known = default_labels()
    values: dict[str, Any] = {}
    labels: dict[str, list[str]] = {}
    for f in business.fields:
        values[f.key] = form.gold[f.key]
        labels[f.key] = [f.label, *known.get(f.key, [])]
    if form.consent is not None:
        values["consent"], labels["consent"] = "true", [form.consent.label]
    extra: dict[str, Any] = {"success": success_pattern(form)}
    for name, text in (("submit", form.buttons.submit), ("next", form.buttons.next)):
        if name in Goal.model_fields and text:  # a goal that names its buttons (a list)
            extra[name] = [text]
    fields = dict(task=form.goal, labels=labels, must_place=[k for k in values], **extra)
    try:
        return Goal(values=values, **fields)
    except ValidationError:  # a goal whose values are strings only: a list joined
        sep = "、" if form.lang == "zh" else ", "
        flat = {k: sep.join(v) if isinstance(v, list) else v for k, v in values.items()}
        return Goal(values=flat, **fields)


def run_agent(
    browser: Any, business: Any, form: Form, base: str, trace_dir: Path | None = None
) -> Run:
    """The browser agent (``DomPerception`` + ``FormPolicy``) on ``form``, in a new context."""
    from si_agent.agent import Agent, DomPerception, FormPolicy
    from si_agent.origins import OriginPolicy

    run = uuid.uuid4().hex[:10]
    context = browser.new_context(locale="zh-CN", service_workers="block")
    started = time.perf_counter()
    try:
        page = context.new_page()
        page.set_default_timeout(10_000)
        page.goto(f"{base}/f/{form.id}?run={run}")
        agent = Agent(DomPerception(), FormPolicy(), origins=OriginPolicy([base]))
        result = agent.run(
            page, goal(form, business), trace_dir=trace_dir / form.id if trace_dir else None
        )
    finally:
        context.close()
    seconds = time.perf_counter() - started
    received, submitted, more = _received(base, run)
    detail = "" if result.success else (result.message or "failed")
    if result.missing:
        detail += f" missing {result.missing}"
    return Run(
        form_id=form.id,
        filler="agent",
        reported_success=result.success,
        submitted=submitted,
        fields=check(form, received),
        strays=strays(form, received),
        reported=[*result.unplaced, *result.failed],
        steps=len(result.steps),
        seconds=seconds,
        detail="; ".join(x for x in (detail.strip(), more) if x),
    )


CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]


def run_suite(
    forms: list[Form],
    data_dir: Path,
    chromium: str,
    fillers: tuple[str, ...],
    progress: bool = False,
    driver: Any = None,
) -> dict[str, list[Run]]:
    """Serve the suite and run each of ``fillers`` (``rpa``, ``agent``) on every form. The
    agent's browser comes from ``driver`` (a started Playwright), else from one of its own;
    the rpa executor runs its own on its thread."""
    from si_agent.config.settings import Settings
    from si_agent.executor import Executors
    from si_agent.executor.rpa import RpaExecutor

    runs: dict[str, list[Run]] = {f: [] for f in fillers}
    with serving(create_app(forms)) as base:
        catalog = businesses(forms, base, data_dir / "businesses")
        if "rpa" in fillers:
            settings = Settings(
                business_dir=data_dir / "businesses",
                data_dir=data_dir / "si",
                session_store="memory",
                knowledge="none",
                rpa_chromium=chromium,
            )
            executor = RpaExecutor(settings.data_dir / "rpa", chromium=chromium)
            executors = Executors(settings)
            try:
                for n, form in enumerate(forms, 1):
                    r = run_rpa(executor, executors, catalog[form.id], form, base)
                    runs["rpa"].append(r)
                    if progress:
                        _progress("rpa", n, len(forms), r)
            finally:
                executor.close()
        if "agent" in fillers:
            if driver is not None:
                _agent_runs(
                    driver, chromium, forms, catalog, base, data_dir, runs["agent"], progress
                )
            else:
                from playwright.sync_api import sync_playwright

                with sync_playwright() as own:
                    _agent_runs(
                        own, chromium, forms, catalog, base, data_dir, runs["agent"], progress
                    )
    return runs


def _agent_runs(
    driver: Any,
    chromium: str,
    forms: list[Form],
    catalog: dict[str, Any],
    base: str,
    data_dir: Path,
    out: list[Run],
    progress: bool,
) -> None:
    browser = driver.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
    try:
        for n, form in enumerate(forms, 1):
            out.append(
                run_agent(browser, catalog[form.id], form, base, trace_dir=data_dir / "agent")
            )
            if progress:
                _progress("agent", n, len(forms), out[-1])
    finally:
        browser.close()


def _progress(filler: str, n: int, total: int, r: Run) -> None:
    print(
        f"{filler} {n}/{total} {r.form_id}: {r.right}/{len(r.fields)} right, "
        f"{'submitted' if r.submitted else 'not submitted'}, "
        f"{'success' if r.reported_success else 'failure'} reported"
        f"{', SILENT LOSS ' + ','.join(r.silent) if r.silent else ''}, {r.seconds:.1f}s",
        file=sys.stderr,
    )


# -- the report ------------------------------------------------------------------------------------


def _pct(n: int, d: int) -> str:
    return f"{n}/{d} ({100 * n / d:.0f}%)" if d else "-"


def per_kind(runs: list[Run]) -> dict[str, tuple[int, int]]:
    """Control kind -> (values placed right, values) over ``runs``."""
    out: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for r in runs:
        for f in r.fields:
            for kind in set(f.kinds):
                out[kind][0] += f.right
                out[kind][1] += 1
    return {k: (v[0], v[1]) for k, v in sorted(out.items())}


def totals(runs: list[Run]) -> dict[str, Any]:
    values = sum(len(r.fields) for r in runs)
    return {
        "forms": len(runs),
        "values": values,
        "right": sum(r.right for r in runs),
        "received_right": sum(r.right for r in runs if r.submitted),
        "submitted": sum(r.submitted for r in runs),
        "reported_success": sum(r.reported_success for r in runs),
        "fully_right": sum(r.fully_right for r in runs),
        "silent_runs": sum(bool(r.silent) for r in runs),
        "silent_values": sum(len(r.silent) for r in runs),
        "wrong_values": sum(len(r.wrong) for r in runs),
        "strays": sum(len(r.strays) for r in runs),
        "seconds": sum(r.seconds for r in runs),
    }


def tables(forms: list[Form], runs: dict[str, list[Run]]) -> str:
    """Markdown: per control kind, per form, and totals, for each filler."""
    fillers = list(runs)
    lines = [
        "## Values placed right, per control kind",
        "",
        "| Kind | " + " | ".join(fillers) + " |",
        "|---|" + "---:|" * len(fillers),
    ]
    kinds = {f: per_kind(rs) for f, rs in runs.items()}
    for kind in sorted({k for ks in kinds.values() for k in ks}):
        lines.append(
            f"| {kind} | " + " | ".join(_pct(*kinds[f].get(kind, (0, 0))) for f in fillers) + " |"
        )
    by_form = {f: {r.form_id: r for r in rs} for f, rs in runs.items()}
    lines += [
        "",
        "## Per form",
        "",
        "Cells: values placed right/values, S submitted, OK submitted and fully right, "
        "!n success reported with n values left out unreported (silent loss), ✗n n values "
        "wrong (another value received), steps, seconds.",
        "",
        "| Form | Lang | Tags | " + " | ".join(fillers) + " |",
        "|---|---|---|" + "---|" * len(fillers),
    ]
    for form in forms:
        cells = []
        for f in fillers:
            r = by_form[f].get(form.id)
            if r is None:
                cells.append("-")
                continue
            marks = "".join(
                m
                for m, on in (
                    ("S", r.submitted),
                    (" OK", r.fully_right),
                    (f" !{len(r.silent)}", bool(r.silent)),
                    (f" ✗{len(r.wrong)}", bool(r.wrong)),
                )
                if on
            )
            cells.append(f"{r.right}/{len(r.fields)} {marks} · {r.steps} · {r.seconds:.1f}s")
        lines.append(
            f"| {form.id} | {form.lang} | {', '.join(form.tags)} | " + " | ".join(cells) + " |"
        )
    lines += [
        "",
        "## Totals",
        "",
        "| | " + " | ".join(fillers) + " |",
        "|---|" + "---:|" * len(fillers),
    ]
    t = {f: totals(rs) for f, rs in runs.items()}
    rows = [
        ("values placed right (in the controls)", lambda x: _pct(x["right"], x["values"])),
        ("values received right (submitted)", lambda x: _pct(x["received_right"], x["values"])),
        ("forms submitted", lambda x: _pct(x["submitted"], x["forms"])),
        ("success reported", lambda x: _pct(x["reported_success"], x["forms"])),
        ("forms fully right", lambda x: _pct(x["fully_right"], x["forms"])),
        ("silent loss: runs", lambda x: str(x["silent_runs"])),
        ("silent loss: values", lambda x: str(x["silent_values"])),
        ("wrong values received", lambda x: str(x["wrong_values"])),
        ("values written where none belongs", lambda x: str(x["strays"])),
        ("seconds (total)", lambda x: f"{x['seconds']:.0f}"),
    ]
    for name, fmt in rows:
        lines.append(f"| {name} | " + " | ".join(fmt(t[f]) for f in fillers) + " |")
    for f in fillers:
        steps = [r.steps for r in runs[f]]
        if steps:
            lines.append(
                f"\n{f}: mean steps {statistics.mean(steps):.1f}, "
                f"mean seconds {statistics.mean(r.seconds for r in runs[f]):.1f}"
            )
    return "\n".join(lines)


def failures(runs: dict[str, list[Run]]) -> str:
    """Markdown: what went wrong on each form not fully right."""
    lines = [
        "| Filler | Form | Left out | Wrong | Reported | Detail |",
        "|---|---|---|---|---|---|",
    ]
    for filler, rs in runs.items():
        for r in rs:
            if not r.fully_right:
                lines.append(
                    f"| {filler} | {r.form_id} | {', '.join(r.left_out) or '-'} | "
                    f"{', '.join(r.wrong) or '-'} | {', '.join(r.reported) or '-'} | "
                    f"{r.detail[:160].replace('|', '/') or '-'} |"
                )
    return "\n".join(lines)
