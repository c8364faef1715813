"""Benchmark: the browser agent's task suite on the demo portal, per decider, and
the direct RPA mapping on the tasks both can do.

What it measures, for each task of ``tests/agent/tasks.yaml``:

- with ``DomPerception`` and ``FormPolicy`` (offline, deterministic), and with a
  scripted model (``ModelDecider`` through the real ``openai`` client and HTTP to
  ``FakeOpenAI``, answering each request with the step ``FormPolicy`` chooses on the
  same goal, view and memory: ``si_agent.testing.agent_suite.ScriptedModel``):
  whether the outcome is the one the task expects (success with its output and
  exactly one application holding the expected values, or the expected failure),
  the steps taken, the model calls and prompt characters (the messages as sent,
  ``ModelDecider.prompt_chars``), wasted calls (model calls beyond the steps the
  agent took; each step is one call the script dictated) and seconds;
- with the direct RPA mapping (``si_agent.executor.rpa.RpaExecutor`` and the
  businesses in ``examples/portal/businesses``), on the tasks it can do too (a
  version-1 form, no half-submitted start page) that expect a success: whether it
  succeeds with the expected application, and seconds. The RPA job opens its own
  browser context and logs in each time; the agent's page is logged in once.

The scripted model measures cost and plumbing, not a real model's judgement: its
answers are FormPolicy's. Tasks marked ``xfail`` in the file (known agent bugs)
count as not passed.

How: one demo portal subprocess (``si-agent portal``), reset before each task; one
Chromium (``SI_CHROMIUM_PATH`` or /usr/bin/chromium) through Playwright for the
agent. Prints markdown tables.

    python scripts/bench_agent.py [--tasks tests/agent/tasks.yaml] [--only id1,id2]
"""

from __future__ import annotations

import argparse
import logging
import os
import statistics
import tempfile
import time
import uuid
from pathlib import Path

from si_agent.agent import AgentResult, FormPolicy
from si_agent.testing import FakeOpenAI
from si_agent.testing.agent_suite import (
    PASSWORD,
    USER,
    PortalProcess,
    ScriptedModel,
    Task,
    TaskOutcome,
    applications,
    load_tasks,
    log_in,
    problems,
    run_task,
)

ROOT = Path(__file__).resolve().parents[1]
BUSINESSES = ROOT / "examples" / "portal" / "businesses"
CHROMIUM = os.environ.get("SI_CHROMIUM_PATH") or "/usr/bin/chromium"


Row = dict  # one task's measures for one decider


def run_deciders(tasks: list[Task], portal: str) -> dict[str, list[Row]]:
    from playwright.sync_api import sync_playwright

    rows: dict[str, list[Row]] = {"FormPolicy": [], "scripted model": []}
    fake = FakeOpenAI()
    fake.start()
    chat = fake.chat_model("scripted-form-policy", llm_max_retries=0, llm_timeout=10.0)
    try:
        with sync_playwright() as driver:
            browser = driver.chromium.launch(executable_path=CHROMIUM)
            page = browser.new_context(locale="zh-CN").new_page()
            page.set_default_timeout(15_000)
            log_in(page, portal)
            for task in tasks:
                started = time.monotonic()
                outcome = run_task(page, portal, task, FormPolicy())
                rows["FormPolicy"].append(_row(task, outcome, time.monotonic() - started))
                fake.clear()
                decider = ScriptedModel(fake, chat)
                started = time.monotonic()
                outcome = run_task(page, portal, task, decider)
                row = _row(task, outcome, time.monotonic() - started)
                row.update(calls=decider.model.calls, prompt_chars=decider.model.prompt_chars,
                           dictated=decider.dictated,
                           wasted=decider.model.calls - len(outcome.result.steps))
                rows["scripted model"].append(row)
            browser.close()
    finally:
        fake.stop()
    return rows


def _row(task: Task, outcome: TaskOutcome, seconds: float) -> Row:
    found = problems(task, outcome)
    return Row(id=task.id, passed=not found, problems=found, steps=len(outcome.result.steps),
               seconds=seconds, success=outcome.result.success)


def run_rpa(tasks: list[Task], portal: str) -> list[Row]:
    """The direct RPA mapping on the comparable tasks that expect a success."""
    from si_agent.config.loader import load_businesses
    from si_agent.config.settings import Settings
    from si_agent.errors import ExecutorError
    from si_agent.executor import Executors, JobContext
    from si_agent.executor.rpa import RpaExecutor

    os.environ.update(SI_PORTAL_URL=portal, SI_PORTAL_USER=USER, SI_PORTAL_PASSWORD=PASSWORD)
    businesses = load_businesses(BUSINESSES)
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-rpa-") as data_dir:
        settings = Settings(business_dir=BUSINESSES, data_dir=Path(data_dir),
                            session_store="memory", knowledge="none", rpa_chromium=CHROMIUM)
        executor = RpaExecutor(Path(data_dir) / "rpa", chromium=CHROMIUM)
        executors = Executors(settings)
        try:
            for task in tasks:
                if not (task.rpa_comparable and task.expect.success):
                    continue
                business = businesses[task.business]
                values = {k: v for k, v in task.goal.values.items()
                          if k in {f.key for f in business.fields}}
                _prepare_portal(portal, task)
                started = time.monotonic()
                try:
                    output = executor.run(business, values, idempotency_key=uuid.uuid4().hex,
                                          options=executors.options(business),
                                          job=JobContext(id=task.id))
                    result = AgentResult(success=True, output={
                        k: v for k, v in output.items() if isinstance(v, str)})
                except ExecutorError as exc:
                    result = AgentResult(success=False, message=exc.message)
                seconds = time.monotonic() - started
                outcome = TaskOutcome(task_id=task.id, result=result,
                                      applications=applications(portal))
                row = _row(task, outcome, seconds)
                row["steps"] = None
                rows.append(row)
        finally:
            executor.close()
    return rows


def _prepare_portal(portal: str, task: Task) -> None:
    """The task's portal setup without a page: a reset and the one-time fault."""
    import httpx

    httpx.post(portal + "/_admin/reset").raise_for_status()
    if task.setup.fault is not None:
        httpx.post(portal + "/_admin/fail_next",
                   json={"count": 1, **task.setup.fault}).raise_for_status()


# -- tables ------------------------------------------------------------------------------

def summary(rows: dict[str, list[Row]], tasks: list[Task]) -> str:
    known = sum(1 for t in tasks if t.xfail)
    lines = ["| decider | tasks | as expected | rate | known agent bugs (xfail) | steps/task "
             "| model calls/task | prompt chars/call | wasted calls | s/task |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for name, got in rows.items():
        passed = sum(r["passed"] for r in got)
        calls = sum(r.get("calls", 0) for r in got)
        chars = sum(r.get("prompt_chars", 0) for r in got)
        model = name != "FormPolicy"
        lines.append(
            f"| {name} | {len(got)} | {passed} | {passed / len(got):.0%} | {known} "
            f"| {statistics.mean(r['steps'] for r in got):.1f} "
            f"| {calls / len(got):.1f} | {chars / calls:,.0f} | "
            f"{sum(r.get('wasted', 0) for r in got)} | "
            f"{statistics.mean(r['seconds'] for r in got):.2f} |"
            if model else
            f"| {name} | {len(got)} | {passed} | {passed / len(got):.0%} | {known} "
            f"| {statistics.mean(r['steps'] for r in got):.1f} | – | – | – "
            f"| {statistics.mean(r['seconds'] for r in got):.2f} |")
    return "\n".join(lines)


def per_task(rows: dict[str, list[Row]], tasks: list[Task]) -> str:
    policy, model = rows["FormPolicy"], rows["scripted model"]
    lines = ["| task | expects | FormPolicy | steps | s | scripted model | steps | calls "
             "| prompt chars | s |",
             "|---|---|---|---:|---:|---|---:|---:|---:|---:|"]
    for task, p, m in zip(tasks, policy, model, strict=True):
        expects = "success" if task.expect.success else "failure"
        lines.append(
            f"| {task.id} | {expects} | {_verdict(task, p)} | {p['steps']} | {p['seconds']:.2f} "
            f"| {_verdict(task, m)} | {m['steps']} | {m['calls']} | {m['prompt_chars']:,} "
            f"| {m['seconds']:.2f} |")
    return "\n".join(lines)


def rpa_table(agent: list[Row], rpa: list[Row]) -> str:
    by_id = {r["id"]: r for r in agent}
    lines = ["| task | FormPolicy agent | s | direct RPA mapping | s |",
             "|---|---|---:|---|---:|"]
    for r in rpa:
        a = by_id[r["id"]]
        lines.append(f"| {r['id']} | {_ok(a)} | {a['seconds']:.2f} | {_ok(r)} "
                     f"| {r['seconds']:.2f} |")
    lines.append(f"| **total** | {sum(by_id[r['id']]['passed'] for r in rpa)}/{len(rpa)} "
                 f"| {sum(by_id[r['id']]['seconds'] for r in rpa):.2f} "
                 f"| {sum(r['passed'] for r in rpa)}/{len(rpa)} "
                 f"| {sum(r['seconds'] for r in rpa):.2f} |")
    return "\n".join(lines)


def _ok(row: Row) -> str:
    return "ok" if row["passed"] else "FAIL: " + "; ".join(row["problems"])[:90]


def _verdict(task: Task, row: Row) -> str:
    if row["passed"]:
        return "ok"
    return "xfail (known bug)" if task.xfail else "FAIL: " + "; ".join(row["problems"])[:60]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", default=str(ROOT / "tests" / "agent" / "tasks.yaml"))
    parser.add_argument("--only", default="", help="comma-separated task ids")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    tasks = load_tasks(args.tasks)
    if args.only:
        wanted = set(args.only.split(","))
        tasks = [t for t in tasks if t.id in wanted]
    with PortalProcess() as portal:
        rows = run_deciders(tasks, portal.url)
        rpa = run_rpa(tasks, portal.url)
    print(f"## Browser agent task suite ({len(tasks)} tasks, {args.tasks})\n")
    print(summary(rows, tasks) + "\n")
    print("## Per task\n")
    print(per_task(rows, tasks) + "\n")
    print(f"## Agent vs the direct RPA mapping ({len(rpa)} tasks both can do)\n")
    print(rpa_table(rows["FormPolicy"], rpa))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
