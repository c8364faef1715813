"""``si-agent worker`` (a Celery worker for long-running jobs) and ``si-agent rpa``
(staff tools for web-form businesses)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from tempfile import TemporaryDirectory

from si_agent.config.settings import Settings


def register(sub: argparse._SubParsersAction) -> None:
    worker = sub.add_parser("worker", help="run a Celery worker for long-running jobs")
    worker.add_argument("--concurrency", type=int, default=1,
                        help="jobs at once (one browser per job process)")
    worker.add_argument("--loglevel", default="info")
    worker.set_defaults(func=_worker)

    rpa = sub.add_parser("rpa", help="web-form (rpa) businesses: try a form mapping")
    rpa_sub = rpa.add_subparsers(dest="rpa_command", required=True)
    run = rpa_sub.add_parser("run", help="fill and submit one business's form once")
    run.add_argument("business", help="business id (its api.kind must be rpa)")
    run.add_argument("--values", required=True, help='field values as JSON, e.g. \'{"name": "张伟"}\'')
    run.add_argument("--headed", action="store_true", help="show the browser window")
    run.add_argument("--trace", default=None, help="directory for the trace (default $SI_DATA_DIR/rpa)")
    run.set_defaults(func=_rpa_run)
    find = rpa_sub.add_parser("discover", help="print the fields a web form asks for, as YAML")
    find.add_argument("url", help="the form's address")
    find.add_argument("--business", default=None,
                      help="take login, fixed controls and overrides from this rpa business")
    find.add_argument("--fixed", default='{"证件类型": "居民身份证", "我已阅读并同意承诺书": true}',
                      help="controls the business always sets, as JSON (label -> value)")
    find.set_defaults(func=_rpa_discover)


def _rpa_discover(args: argparse.Namespace, settings: Settings) -> int:
    from si_agent.config.loader import load_businesses
    from si_agent.config.model import Business
    from si_agent.errors import ExecutorError
    from si_agent.executor import Executors
    from si_agent.executor.rpa import RpaExecutor, RpaOptions
    from si_agent.executor.rpa.discover import as_yaml

    if args.business:
        business = load_businesses(settings.business_dir).get(args.business)
        if business is None or business.api.kind != "rpa":
            print(f"error: {args.business!r} is not an rpa business", file=sys.stderr)
            return 2
        options = Executors(settings).options(business).model_copy(update={"url": args.url})
    else:
        options = RpaOptions(url=args.url, fixed=json.loads(args.fixed), login={
            "url": args.url, "user_env": "SI_PORTAL_USER", "password_env": "SI_PORTAL_PASSWORD"})
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


def _worker(args: argparse.Namespace, settings: Settings) -> int:
    from si_agent.jobs.celery import celery_app

    app = celery_app(settings)
    app.worker_main(["worker", f"--concurrency={args.concurrency}", f"--loglevel={args.loglevel}",
                     "--without-gossip", "--without-mingle"])
    return 0


def _rpa_run(args: argparse.Namespace, settings: Settings) -> int:
    import uuid

    from si_agent.config.loader import load_businesses
    from si_agent.errors import ExecutorError
    from si_agent.executor import Executors, JobContext
    from si_agent.executor.rpa import RpaExecutor

    catalog = load_businesses(settings.business_dir)
    business = catalog.get(args.business)
    if business is None or business.api.kind != "rpa":
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
