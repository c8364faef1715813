"""``si-agent audit`` (query the audit log) and ``si-agent admin-token`` (a token
for ``GET /api/admin/audit``)."""

from __future__ import annotations

import argparse
import sys

from si_agent.config.settings import Settings

_COLUMNS = ("time (UTC)", "event", "business", "job", "outcome", "application_no", "user",
            "values")
MAX_LIMIT = 1000


def register(sub: argparse._SubParsersAction) -> None:
    audit = sub.add_parser(
        "audit", help="list audit log entries, newest first",
        description="List the audit log's entries (submissions and their outcomes, values "
                    "masked), newest first, as a table or JSON lines; see docs/audit.md.")
    audit.add_argument("--business", default=None,
                       help="only this business id (default: every business)")
    audit.add_argument("--since", default=None,
                       help="ISO time (UTC unless it says) or an age: 30m, 2h, 7d, 1w "
                            "(default: from the start)")
    audit.add_argument("--limit", type=int, default=100, help=f"at most this many (1-{MAX_LIMIT})")
    audit.add_argument("--json", action="store_true", help="one JSON object per line")
    audit.set_defaults(func=_audit)

    token = sub.add_parser(
        "admin-token", help="print an access token with the admin role (HS256 secret only)",
        description="Print a JWT with the admin role, signed with SI_JWT_SECRET (HS256), for "
                    "GET /api/admin/audit; see docs/audit.md.")
    token.add_argument("--user", default="admin", help="the token's subject (a staff id)")
    token.set_defaults(func=_admin_token)


def _audit(args: argparse.Namespace, settings: Settings) -> int:
    from si_agent.audit import create_audit_log, parse_since

    if not 1 <= args.limit <= MAX_LIMIT:
        print(f"error: --limit must be between 1 and {MAX_LIMIT}", file=sys.stderr)
        return 2
    try:
        since = parse_since(args.since) if args.since else None
    except ValueError as exc:
        print(f"error: --since: {exc}", file=sys.stderr)
        return 2
    audit = create_audit_log(settings, _session_store(settings))
    if audit.store.name == "memory":
        print("error: SI_AUDIT_STORE=memory keeps entries inside the server process; "
              "use sqlite or redis to read them here", file=sys.stderr)
        return 2
    entries = audit.query(business=args.business, since=since, limit=args.limit)
    if args.json:
        for entry in entries:
            print(entry.model_dump_json())
        return 0
    rows = [_row(e) for e in entries]
    widths = [max(len(c), *(len(r[i]) for r in rows)) if rows else len(c)
              for i, c in enumerate(_COLUMNS)]
    print("  ".join(c.ljust(w) for c, w in zip(_COLUMNS, widths, strict=True)).rstrip())
    for row in rows:
        print("  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)).rstrip())
    print(f"{len(entries)} entr{'y' if len(entries) == 1 else 'ies'}", file=sys.stderr)
    return 0


def _session_store(settings: Settings) -> object | None:
    """The session store, when ``auto`` must follow it (Redis sessions → Redis audit)."""
    if settings.audit_store != "auto":
        return None
    from si_agent.session import create_store

    return create_store(settings)


def _row(entry) -> list[str]:
    if entry.event == "staff":  # who did what: the actor is a staff name, not a hash
        return [entry.at.strftime("%Y-%m-%d %H:%M:%S"), f"staff:{entry.action.value}", "-",
                "-", entry.outcome, "-", entry.actor or "-",
                f"target={entry.target}" if entry.target else ""]
    event = f"{entry.event}:{entry.state or entry.channel}"
    values = ", ".join(f"{k}={v}" for k, v in entry.values.items())
    return [entry.at.strftime("%Y-%m-%d %H:%M:%S"), event, entry.business,
            (entry.job_id or "-")[:12], entry.outcome, entry.application_no or "-",
            entry.user[:12], values]


def _admin_token(args: argparse.Namespace, settings: Settings) -> int:
    from flask import Flask
    from flask_jwt_extended import create_access_token

    from si_agent.server.admin import ADMIN_ROLE, ROLES_CLAIM
    from si_agent.server.auth import init_auth

    if settings.jwt_algorithm != "HS256":
        print(f"error: with {settings.jwt_algorithm} the identity provider signs tokens: give "
              f"staff a token whose '{ROLES_CLAIM}' claim lists '{ADMIN_ROLE}'", file=sys.stderr)
        return 2
    app = Flask("si_agent_admin_token")
    init_auth(app, settings)  # the server's own signing settings (and production checks)
    with app.app_context():
        print(create_access_token(identity=args.user,
                                  additional_claims={ROLES_CLAIM: [ADMIN_ROLE]}))
    return 0
