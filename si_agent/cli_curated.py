"""``si-agent curated import FILE | list``: the curated answers from a terminal.

``import`` reads a 常见问题 spreadsheet (.xlsx or .csv, as the console's import does:
``si_agent.curated.sheet``) into the deployment's curated answers, kept where its
sessions are (``SI_SESSION_STORE``: a SQLite file of this machine, or Redis). A file with
any bad row imports nothing; every bad row is printed with its number. The import is
audited with the actor ``cli:<OS user>``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from si_agent.config.settings import Settings


def register(sub: argparse._SubParsersAction) -> None:
    curated = sub.add_parser(
        "curated", help="curated answers: import a 常见问题 spreadsheet, list them",
        description="Curated answers (docs/curated.md): staff-written answers that win "
        "over the knowledge base's search.")
    actions = curated.add_subparsers(dest="action", required=True)
    imp = actions.add_parser(
        "import", help="import a .xlsx or .csv of questions and answers",
        description="Import a spreadsheet whose first row names the columns 问题, 答案, "
        "来源, 日期 (and optionally 相似问法, 业务). A question that is already a curated "
        "answer's updates it; any bad row imports nothing.")
    imp.add_argument("file", type=Path, help="the spreadsheet (.xlsx or .csv, UTF-8 or GB18030)")
    imp.add_argument("--dry-run", action="store_true", help="check the file, change nothing")
    imp.set_defaults(func=_import)
    listing = actions.add_parser(
        "list", help="list the curated answers and their hit counts",
        description="Every curated answer (enabled or not), the most asked first: its id, "
        "hit count, state, as-of date and question.")
    listing.set_defaults(func=_list)


def _book(settings: Settings):
    from si_agent.config.loader import load_businesses
    from si_agent.curated.assembly import create_curated_book
    from si_agent.session import create_store

    sessions = create_store(settings)
    if settings.session_store == "memory":
        print("warning: SI_SESSION_STORE=memory: curated answers are not kept", file=sys.stderr)
    catalog = load_businesses(settings.business_dir)
    return create_curated_book(settings, catalog, sessions), catalog, sessions


def _import(args: argparse.Namespace, settings: Settings) -> int:
    from si_agent.audit import StaffAction, create_audit_log
    from si_agent.cli_staff import _actor
    from si_agent.curated.sheet import MAX_BYTES, SheetError, import_errors, read_sheet

    book, catalog, sessions = _book(settings)
    with open(args.file, "rb") as f:
        data = f.read(MAX_BYTES + 1)
    names = {}
    for b in catalog.values():
        names[b.id] = names[b.name] = b.id
    try:
        rows = read_sheet(data, args.file.name, names)
    except SheetError as exc:
        for reason in exc.reasons:
            print(reason, file=sys.stderr)
        return 1
    actor = _actor()
    existing = {a.id for a in book.all()}
    plan = book.plan_import([r.draft for r in rows], actor)
    if plan.errors:
        for reason in import_errors(plan.errors, rows, existing):
            print(reason, file=sys.stderr)
        print("nothing imported", file=sys.stderr)
        return 1
    summary = f"{len(plan.added)} added, {len(plan.updated)} updated"
    if args.dry_run:
        print(f"{args.file}: would import: {summary}")
        return 0
    book.run_import(plan)
    create_audit_log(settings, sessions).staff(actor, StaffAction.CURATED_IMPORTED,
                                               target=args.file.name[:100], detail=summary)
    print(f"{args.file}: {summary}")
    return 0


def _list(args: argparse.Namespace, settings: Settings) -> int:
    book, _, _ = _book(settings)
    answers = book.all()
    for a in answers:
        state = "enabled" if a.enabled else "disabled"
        print(f"{a.id}  {a.hits:>6} hits  {state:<8}  {a.as_of}  {a.question}")
    print(f"{len(answers)} curated answer{'' if len(answers) == 1 else 's'}", file=sys.stderr)
    return 0
