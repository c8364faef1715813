"""The ``si-agent`` command: serve, chat (``cli_chat``), portal, validate, graph, replay,
and the sub-commands of ``rag.cli``, ``cli_jobs``, ``cli_audit``, ``cli_staff`` and ``cli_curated``."""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence
from pathlib import Path

from si_agent import __version__
from si_agent.config.dev_secret import with_dev_secret
from si_agent.config.settings import Settings
from si_agent.errors import ConfigErrors, SettingsError, SiAgentError

log = logging.getLogger("si_agent")


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        settings = with_dev_secret(Settings.from_env())  # dev: the data dir's own secret
    except SettingsError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    logging.basicConfig(
        level="DEBUG" if getattr(args, "verbose", False) else settings.log_level,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    # Libraries that narrate at INFO: one line per trigger, CPU feature probing.
    for noisy in ("transitions", "faiss", "faiss.loader"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    if args.command is None:
        parser.print_help()
        return 2
    try:
        return args.func(args, settings)
    except ConfigErrors as exc:
        print("error: the business configuration is invalid; refusing to start:", file=sys.stderr)
        for err in exc.errors:
            print(f"  {err}", file=sys.stderr)
        return 2
    except SiAgentError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="si-agent",
        description="Social-insurance assistant: serve the web page, chat in the terminal, "
                    "check business files, replay transcripts. `scripts/run.sh COMMAND ...` "
                    "runs these from the repository's .venv.")
    p.add_argument("--version", action="version", version=f"si-agent {__version__}")
    sub = p.add_subparsers(dest="command")

    from si_agent.cli_chat import register as register_chat

    register_chat(sub)

    serve = sub.add_parser(
        "serve", help="serve the HTTP API and the web page (gunicorn)",
        description="Serve the HTTP API and the web page with gunicorn (threaded workers). "
                    "The port answers at once; the knowledge base is prepared in the "
                    "background (/readyz reports it as 'building' until then).")
    serve.add_argument("--host", default="127.0.0.1",
                       help="address to listen on (default: 127.0.0.1; 0.0.0.0 for every "
                            "interface)")
    serve.add_argument("--port", type=int, default=8000, help="port to listen on (default: 8000)")
    serve.add_argument("--cert", default=None,
                       help="TLS certificate (PEM) for HTTPS, with --key (default: none, HTTP)")
    serve.add_argument("--key", default=None,
                       help="TLS private key (PEM) for HTTPS, with --cert (default: none, HTTP)")
    serve.add_argument("--workers", type=_positive, default=1,
                       help="gunicorn worker processes (default: 1). The embedded Milvus Lite "
                            "knowledge base opens in one process only, so with more workers "
                            "only one answers knowledge questions, unless SI_MILVUS_URI names a "
                            "Milvus server; sessions must then be shared (SI_SESSION_STORE="
                            "redis or sqlite). See docs/deploy.md")
    serve.add_argument("--threads", type=_positive, default=8,
                       help="threads per worker: requests served at once by each (default: 8)")
    serve.add_argument("--access-log", default=None, metavar="FILE",
                       help="write gunicorn's access log to FILE, '-' for stdout "
                            "(default: none)")
    serve.add_argument("--dev", action="store_true",
                       help="use Werkzeug's development server (one process, threads) instead "
                            "of gunicorn; --workers, --threads and --access-log do not apply "
                            "(default: off)")
    serve.set_defaults(func=_serve)

    portal = sub.add_parser(
        "portal", help="serve the demo government portal (web forms only)",
        description="Serve the demo government portal: a web site with a login, forms for the "
                    "four businesses of examples/portal/businesses (multi-page, drafts, "
                    "per-field errors) that the rpa executor fills in Chromium. Its data "
                    "is in $SI_DATA_DIR/demo_portal.db; see docs/demo-portal.md.")
    portal.add_argument("--host", default="127.0.0.1", help="address to listen on")
    portal.add_argument("--port", type=int, default=8100, help="port to listen on")
    portal.set_defaults(func=_portal)

    val = sub.add_parser(
        "validate", help="check business YAML files",
        description="Check a directory of business YAML files as the server does at start: "
                    "YAML syntax, the schema, then meaning (unique ids, known field types, "
                    "regexes that compile...). Prints file:line: path: message for each "
                    "problem; exits 1 on any.")
    val.add_argument("directory", nargs="?", default=None,
                     help="the business directory (default: SI_BUSINESS_DIR or businesses/)")
    val.set_defaults(func=_validate)

    graph = sub.add_parser(
        "graph", help="print the state machine as Mermaid",
        description="Print the dialogue's state machine (states and triggers) as a "
                    "Mermaid state diagram.")
    graph.set_defaults(func=_graph)

    rep = sub.add_parser(
        "replay", help="replay YAML dialogue transcripts",
        description="Replay YAML dialogue transcripts against the configured businesses "
                    "and print PASS (with -v), FAIL or SKIP (an unmet requires:) for each, "
                    "then a summary; exits 1 on any failure.")
    rep.add_argument("paths", nargs="+", help="transcript files or directories of them")
    rep.add_argument("--store", default="memory",
                     help="session store: memory, sqlite, redis, auto")
    rep.add_argument("-v", "--verbose", action="store_true",
                     help="print passing transcripts too, and the log at INFO")
    rep.set_defaults(func=_replay)

    from rag.cli import register as register_kb

    register_kb(sub)
    from si_agent.cli_jobs import register as register_jobs

    register_jobs(sub)
    from si_agent.cli_audit import register as register_audit

    register_audit(sub)
    from si_agent.cli_staff import register as register_staff

    register_staff(sub)
    from si_agent.cli_curated import register as register_curated

    register_curated(sub)
    from si_agent.cli_help import finish

    return finish(p)


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, got {value}")
    return value


def _serve(args: argparse.Namespace, settings: Settings) -> int:
    from si_agent.server.running import serve_dev, serve_gunicorn

    if bool(args.cert) != bool(args.key):
        print("error: --cert and --key go together", file=sys.stderr)
        return 2
    if args.dev:
        serve_dev(settings, host=args.host, port=args.port, cert=args.cert, key=args.key)
    else:
        serve_gunicorn(settings, host=args.host, port=args.port, workers=args.workers,
                       threads=args.threads, cert=args.cert, key=args.key,
                       access_log=args.access_log)
    return 0


def _portal(args: argparse.Namespace, settings: Settings) -> int:
    from si_agent.demo_portal import create_portal_app
    from si_agent.server.running import run_gunicorn

    # One worker: a demo for one person at a time (its state is in SQLite).
    run_gunicorn(lambda: create_portal_app(settings.demo_portal_db), host=args.host,
                 port=args.port, workers=1, threads=8, proc_name="si-agent-portal",
                 ready=lambda: print(f"demo portal on http://{args.host}:{args.port}/ "
                                     "(Ctrl-C to stop)", file=sys.stderr, flush=True))
    return 0


def _validate(args: argparse.Namespace, settings: Settings) -> int:
    from si_agent.app import check_folder
    from si_agent.config.loader import ASSISTANT_FILE
    from si_agent.moderation.words import MODERATION_FILE

    directory = Path(args.directory) if args.directory else settings.business_dir
    found = check_folder(directory)
    # Errors fail validate (and stop the server); warnings are printed and pass.
    catalog, words, errors, warnings = found.catalog, found.words, found.errors, found.warnings
    for err in errors:
        print(err)
    for warning in warnings:
        print(warning)
    noted = f"; {len(warnings)} warning(s), which do not fail validate" if warnings else ""
    if errors:
        print(f"{len(errors)} error(s) in {directory}{noted}", file=sys.stderr)
        return 1
    assistant = ASSISTANT_FILE if (directory / ASSISTANT_FILE).is_file() else "built-in defaults"
    listed = (f"{MODERATION_FILE}" if (directory / MODERATION_FILE).is_file()
              else "built-in default") + f" ({len(words.entries) if words else 0} words)"
    print(f"ok: {len(catalog)} businesses in {directory}; assistant texts: {assistant}; "
          f"moderation list: {listed}{noted}")
    for business in (b for b in catalog.values() if b.discover):
        print(_discovery_report(business, settings))
    return 0


def _discovery_report(business, settings: Settings) -> str:
    """What ``fields: discover`` inferred for ``business`` so far (from the cache)."""
    from si_agent.executor.rpa.discover import load_cached

    cached = load_cached(settings.data_dir / "rpa", business.id)
    if cached is None:
        return (f"{business.id}: fields: discover; not read from the form yet (on first use, "
                f"or now: si-agent rpa discover URL --business {business.id})")
    fields = ", ".join(f"{f['key']} ({f['label']}, {f['type']})" for f in cached.fields)
    return f"{business.id}: fields discovered from {cached.url}: {fields}"


def _graph(args: argparse.Namespace, settings: Settings) -> int:
    from si_agent.core.machine import to_mermaid

    sys.stdout.write(to_mermaid())
    return 0


def _prepare_knowledge(controller) -> None:
    """Open the knowledge base now (building it in a new data dir), not on the first question."""
    from si_agent.knowledge import NoKnowledge, behind

    if isinstance(behind(controller.knowledge), NoKnowledge):  # no knowledge base to open
        return
    status = controller.knowledge.status
    print("正在打开知识库（新的数据目录先用随附的向量建库，约需十几秒；改过的文档要重新计算向量，"
          "会更久）……", file=sys.stderr)
    result = status()
    if not result.get("ok"):
        print(f"warning: knowledge base unavailable: {result.get('detail')}; business "
              "dialogues still work", file=sys.stderr)


def _replay(args: argparse.Namespace, settings: Settings) -> int:
    from si_agent.app import build_controller
    from si_agent.replay import load_dialogues, replay, transcript_settings

    if not args.verbose:  # only PASS/FAIL/SKIP and the summary (and what goes wrong)
        logging.getLogger().setLevel(logging.WARNING)
    base = settings.replace(session_store=args.store)
    controllers: dict[str, tuple[Settings, object]] = {}  # one per distinct settings: block
    hook = demo_backend_hook(settings)
    failed = skipped = 0
    dialogues = load_dialogues(args.paths)
    for source, transcript in dialogues:
        wanted = transcript_settings(transcript, base)
        key = wanted.model_dump_json()
        if key not in controllers:
            controllers[key] = (wanted, build_controller(wanted))
        wanted, controller = controllers[key]
        report = replay(controller, transcript, source=source, backend=hook, settings=wanted)
        if report.skipped:
            skipped += 1
            print(f"SKIP {source}: {report.skipped}")
            continue
        if report.passed:
            if args.verbose:
                print(f"PASS {source}: {report.name}")
            continue
        failed += 1
        print(f"FAIL {source}: {report.name}")
        for f in report.failures:
            print(f"  {f}")
    print(f"{len(dialogues) - failed - skipped} passed, {failed} failed"
          + (f", {skipped} skipped" if skipped else ""))
    return 1 if failed else 0


def demo_backend_hook(settings: Settings):
    """A replay ``backend:`` hook acting on the embedded demo backend."""
    from si_agent.demo_backend import fail_next

    def hook(spec: dict) -> None:
        if "fail_next" in spec:
            fail_next(settings.demo_backend_db, int(spec["fail_next"]),
                      status=int(spec.get("status", 503)))

    return hook


if __name__ == "__main__":
    raise SystemExit(main())
