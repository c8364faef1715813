"""``si-agent worker`` (a Celery worker for long-running jobs) and ``si-agent rpa``
(staff tools for web-form businesses)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from tempfile import TemporaryDirectory

from si_agent.config.settings import Settings
from si_agent.requirements import browser_missing


def register(sub: argparse._SubParsersAction) -> None:
    worker = sub.add_parser(
        "worker", help="run a Celery worker for long-running jobs",
        description="Run a Celery worker that takes the long-running jobs (web-form "
                    "submissions) of servers started with SI_JOB_BACKEND=celery, from the "
                    "Redis they share (SI_REDIS_URL); see docs/rpa.md.")
    worker.add_argument("--concurrency", type=int, default=1,
                        help="jobs at once (one browser per job process)")
    worker.add_argument("--loglevel", default="info",
                        help="Celery's log level: debug, info, warning, error")
    worker.set_defaults(func=_worker)

    rpa = sub.add_parser(
        "rpa", help="web-form (rpa) businesses: try a form mapping",
        description="Staff tools for web-form businesses (api.kind: rpa, docs/rpa.md): fill "
                    "one form once, or read the fields a form asks for. They drive Debian's "
                    "Chromium (SI_RPA_CHROMIUM) through Playwright.")
    rpa_sub = rpa.add_subparsers(dest="rpa_command", required=True)
    run = rpa_sub.add_parser(
        "run", help="fill and submit one business's form once",
        description="Fill and submit the form of one rpa business of SI_BUSINESS_DIR with "
                    "the values given, then print the per-field table, the result and "
                    "where the trace is.")
    run.add_argument("business", help="business id (its api.kind must be rpa)")
    run.add_argument("--values", required=True, help='field values as JSON, e.g. \'{"name": "张伟"}\'')
    run.add_argument("--headed", action="store_true", help="show the browser window")
    run.add_argument("--trace", default=None, help="directory for the trace (default: $SI_DATA_DIR/rpa)")
    run.set_defaults(func=_rpa_run)
    find = rpa_sub.add_parser(
        "discover", help="print the fields a web form asks for, as YAML",
        description="Open a web form, read the required controls of its first page and "
                    "print them as the fields: list of a business YAML. With --business, "
                    "the result is also that business's discovery cache.")
    find.add_argument("url", help="the form's address")
    find.add_argument("--business", default=None,
                      help="take login, fixed controls and overrides from this rpa business "
                           "(default: none, the demo portal's login variables)")
    find.add_argument("--fixed", default='{"证件类型": "居民身份证", "我已阅读并同意承诺书": true}',
                      help="controls the business always sets, as JSON (label -> value)")
    find.set_defaults(func=_rpa_discover)

    agent = sub.add_parser(
        "agent", help="the browser agent: carry out a task on a web site",
        description="The browser agent (docs/agent.md): perceive, decide, act and observe "
                    "on a web site in Chromium until its task is done.")
    agent_sub = agent.add_subparsers(dest="agent_command", required=True)
    go = agent_sub.add_parser(
        "run", help="perceive, decide, act and observe until done",
        description="Carry out one task on a web site from --url, printing each step "
                    "(thought, action, observation) and the result as JSON; exits 1 when "
                    "the task did not succeed.")
    go.add_argument("--url", required=True, help="where to start")
    go.add_argument("--goal", required=True, help='the task, e.g. "申领失业保险金"')
    go.add_argument("--values", default="{}",
                    help="values it may type, by field key or label, as JSON")
    go.add_argument("--target", default=None,
                    help="the link to follow when the form is elsewhere (default: none)")
    go.add_argument("--decider", choices=("rules", "llm"), default="rules",
                    help="rules: the offline FormPolicy; llm: the SI_LLM_* model")
    go.add_argument("--user-env", default="SI_PORTAL_USER",
                    help="environment variable with the login name, if a login page comes")
    go.add_argument("--password-env", default="SI_PORTAL_PASSWORD",
                    help="environment variable with the password, if a login page comes")
    go.add_argument("--headed", action="store_true", help="show the browser window")
    go.add_argument("--trace", default=None,
                    help="directory for screenshots and steps.jsonl (default: no trace)")
    go.set_defaults(func=_agent_run)


def _browser_ready(settings: Settings) -> bool:
    """Whether Playwright and the browser are here; if not, one line each says what to do."""
    missing = browser_missing(settings.rpa_chromium)
    for m in missing:
        print(f"error: {m}", file=sys.stderr)
    return not missing


def _rpa_discover(args: argparse.Namespace, settings: Settings) -> int:
    if not _browser_ready(settings):
        return 2
    from si_agent.config.loader import load_businesses
    from si_agent.config.model import Business
    from si_agent.errors import ExecutorError
    from si_agent.executor import Executors
    from si_agent.executor.rpa import RpaExecutor, RpaOptions
    from si_agent.executor.rpa.discover import as_yaml

    if args.business:
        business = load_businesses(settings.business_dir).get(args.business)
        if business is None or business.api is None or business.api.kind != "rpa":
            print(f"error: {args.business!r} is not an rpa business", file=sys.stderr)
            return 2
        options = Executors(settings).options(business).model_copy(update={"url": args.url})
    else:
        try:
            fixed = json.loads(args.fixed)
        except json.JSONDecodeError as exc:
            print(f"error: --fixed is not JSON: {exc}", file=sys.stderr)
            return 2
        options = RpaOptions(url=args.url, fixed=fixed, login={
            "user_env": "SI_PORTAL_USER", "password_env": "SI_PORTAL_PASSWORD"})
        business = Business.model_validate({
            "id": "discovered", "name": "discovered", "type": "handle", "description": "-",
            "keywords": ["-"], "fields": "discover", "require_confirm": True,
            "api": {"kind": "rpa", "url": args.url, "result_template": "-"}})
    with TemporaryDirectory() as scratch:
        # For a business, the result is its cache: the assistant uses these fields.
        root = settings.data_dir / "rpa" if args.business else Path(scratch)
        executor = RpaExecutor(root, chromium=settings.rpa_chromium)
        try:
            found = executor.discover(business, options)
        except ExecutorError as exc:
            print(f"error: {exc.message}", file=sys.stderr)
            return 1
        finally:
            executor.close()
    print(f"# {len(found.fields)} required fields of {args.url} (form hash {found.hash})")
    sys.stdout.write(as_yaml(found.fields))
    return 0


def _agent_run(args: argparse.Namespace, settings: Settings) -> int:
    if not _browser_ready(settings):
        return 2
    import os

    from playwright.sync_api import sync_playwright

    from si_agent.agent import Agent, DomPerception, FormPolicy, Goal, ModelDecider
    from si_agent.executor.rpa.browsers import BROWSER_ARGS
    from si_agent.executor.rpa.form import synonyms

    try:
        values = json.loads(args.values)
    except json.JSONDecodeError as exc:
        print(f"error: --values is not JSON: {exc}", file=sys.stderr)
        return 2
    known = synonyms()
    labels = {key: list(known.get(key, ())) or [key] for key in values}
    user, password = os.environ.get(args.user_env), os.environ.get(args.password_env)
    if user and password:  # for a login page on the way; masked in the trace like the rest
        values |= {"username": user, "password": password}
        labels |= {"username": ["用户名", "账号"], "password": ["密码"]}
    goal = Goal(task=args.goal, values={k: str(v) for k, v in values.items()}, labels=labels,
                target=args.target or "")
    if args.decider == "llm":
        if not settings.llm_base_url:
            print("error: --decider llm needs SI_LLM_BASE_URL (and SI_LLM_API_KEY)",
                  file=sys.stderr)
            return 2
        decider = ModelDecider.from_settings(settings)
    else:
        decider = FormPolicy()

    def show(step, seen) -> None:
        action = step.action.model_dump(exclude={"type"}, exclude_none=True)
        print(f"{step.thought} → {step.action.type} {json.dumps(action, ensure_ascii=False)}"
              f" → {seen.status} {seen.evidence}")

    args_list = [a for a in BROWSER_ARGS if not (args.headed and a == "--headless")]
    with sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=settings.rpa_chromium,
                                         headless=not args.headed, args=args_list)
        page = browser.new_page(locale="zh-CN")
        page.goto(args.url)
        result = Agent(DomPerception(), decider).run(
            page, goal, trace_dir=Path(args.trace) if args.trace else None, on_step=show)
        browser.close()
    print(json.dumps(result.model_dump(include={"success", "output", "message", "missing"}),
                     ensure_ascii=False))
    return 0 if result.success else 1


def _worker(args: argparse.Namespace, settings: Settings) -> int:
    from si_agent.worker import run_worker

    run_worker(settings, concurrency=args.concurrency, loglevel=args.loglevel)
    return 0


def _rpa_run(args: argparse.Namespace, settings: Settings) -> int:
    if not _browser_ready(settings):
        return 2
    import uuid

    from si_agent.config.loader import load_businesses
    from si_agent.errors import ExecutorError
    from si_agent.executor import Executors, JobContext
    from si_agent.executor.rpa import RpaExecutor

    catalog = load_businesses(settings.business_dir)
    business = catalog.get(args.business)
    if business is None or business.api is None or business.api.kind != "rpa":
        print(f"error: {args.business!r} is not an rpa business in {settings.business_dir}",
              file=sys.stderr)
        return 2
    try:
        values = json.loads(args.values)
    except json.JSONDecodeError as exc:
        print(f"error: --values is not JSON: {exc}", file=sys.stderr)
        return 2
    trace_dir = Path(args.trace) if args.trace else settings.data_dir / "rpa"
    executor = RpaExecutor(trace_dir, chromium=settings.rpa_chromium,
                           retention_days=settings.rpa_retention_days, headed=args.headed)
    job = JobContext(id=f"cli-{uuid.uuid4().hex[:8]}")
    options = Executors(settings).options(business)
    try:
        result = executor.run(business, values, idempotency_key=uuid.uuid4().hex,
                              options=options, progress=lambda text: print(text, file=sys.stderr),
                              job=job)
        code = 0
    except ExecutorError as exc:
        print(f"failed: {exc.message}", file=sys.stderr)
        result, code = {"error": exc.message, "field_errors": exc.field_errors}, 1
    finally:
        executor.close()
    fields = json.loads((trace_dir / job.id / "fields.json").read_text("utf-8"))
    for f in fields:
        print(f"{f['status']}\t{f['label']}\t{f['key'] or '-'}\t{f['reason']}")
    print(json.dumps(result, ensure_ascii=False, indent=1))
    print(f"trace: {trace_dir / job.id}", file=sys.stderr)
    return code
