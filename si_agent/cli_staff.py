"""``si-agent staff add|list|remove|passwd``: the console's local staff accounts.

A password is asked twice at a terminal, or read as the first line of standard
input otherwise (``printf '%s\\n' "$PW" | si-agent staff add 张三``). Each change is
written to the audit log with the actor ``cli:<OS user>``.
"""

from __future__ import annotations

import argparse
import getpass
import sys
from datetime import datetime, timezone

from si_agent.config.settings import Settings


def register(sub: argparse._SubParsersAction) -> None:
    staff = sub.add_parser(
        "staff",
        help="manage the staff console's local accounts",
        description="Local accounts for the staff console (/console), kept in "
        "$SI_DATA_DIR/staff.db with Argon2id password hashes; see docs/console.md. "
        "A deployment with an identity provider signs staff in with its tokens "
        "instead (roles claim: staff or admin).",
    )
    actions = staff.add_subparsers(dest="action", required=True)
    add = actions.add_parser(
        "add",
        help="add an account (asks for its password)",
        description="Add an account. The password (10+ characters) is "
        "asked twice at a terminal, else read from the first "
        "line of standard input.",
    )
    add.add_argument("name", help="the sign-in name (letters, digits, _ . @ -)")
    add.add_argument(
        "--admin",
        action="store_true",
        help="give the admin role as well as staff (default: staff only)",
    )
    add.set_defaults(func=_add)
    listing = actions.add_parser(
        "list",
        help="list the accounts",
        description="List the accounts: name, role, created, "
        "last sign-in (never a password or hash).",
    )
    listing.set_defaults(func=_list)
    remove = actions.add_parser(
        "remove",
        help="remove an account and end its sign-ins",
        description="Remove an account; its console sessions end now.",
    )
    remove.add_argument("name", help="the account's sign-in name")
    remove.set_defaults(func=_remove)
    passwd = actions.add_parser(
        "passwd",
        help="set an account's password",
        description="Set a new password (asked as for add); the "
        "account's console sessions end now.",
    )
    passwd.add_argument("name", help="the account's sign-in name")
    passwd.set_defaults(func=_passwd)


def _add(args: argparse.Namespace, settings: Settings) -> int:
    from si_agent.audit import StaffAction
    from si_agent.staff.accounts import ADMIN, STAFF, check_name

    accounts, _, audit = _open(settings)
    check_name(args.name)  # before asking for a password
    account = accounts.add(args.name, _password(), ADMIN if args.admin else STAFF)
    audit.staff(
        _actor(), StaffAction.ACCOUNT_ADDED, target=account.name, detail=f"role {account.role}"
    )
    print(f"added {account.name} ({account.role})")
    return 0


def _list(args: argparse.Namespace, settings: Settings) -> int:
    accounts, _, _ = _open(settings, audited=False)
    rows = [(a.name, a.role, _when(a.created), _when(a.last_login)) for a in accounts.list()]
    header = ("name", "role", "created (UTC)", "last sign-in (UTC)")
    widths = [
        max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(header)
    ]
    for row in (header, *rows):
        print("  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)).rstrip())
    print(f"{len(rows)} account{'' if len(rows) == 1 else 's'}", file=sys.stderr)
    return 0


def _remove(args: argparse.Namespace, settings: Settings) -> int:
    from si_agent.audit import StaffAction

    accounts, sessions, audit = _open(settings)
    accounts.remove(args.name)
    ended = sessions.close_all(args.name)
    _leave_queue(settings, args.name)
    audit.staff(
        _actor(),
        StaffAction.ACCOUNT_REMOVED,
        target=args.name,
        detail=f"{ended} console session(s) ended",
    )
    print(f"removed {args.name}; {ended} console session(s) ended")
    return 0


def _passwd(args: argparse.Namespace, settings: Settings) -> int:
    from si_agent.audit import StaffAction
    from si_agent.errors import AccountError

    accounts, sessions, audit = _open(settings)
    if accounts.get(args.name) is None:
        raise AccountError("unknown", f"no account named {args.name!r}")
    accounts.set_password(args.name, _password())
    ended = sessions.close_all(args.name)
    _leave_queue(settings, args.name)
    audit.staff(
        _actor(),
        StaffAction.PASSWORD_CHANGED,
        target=args.name,
        detail=f"{ended} console session(s) ended",
    )
    print(f"password of {args.name} changed; {ended} console session(s) ended")
    return 0


def _open(settings: Settings, *, audited: bool = True):
    from si_agent.audit import create_audit_log
    from si_agent.cli_audit import _session_store
    from si_agent.staff import Accounts, ConsoleSessions, StaffStore

    store = StaffStore(settings.staff_db)
    audit = create_audit_log(settings, _session_store(settings)) if audited else None
    if audit is not None and audit.store.name == "memory":
        print(
            "warning: SI_AUDIT_STORE=memory: this change is not kept in any audit log",
            file=sys.stderr,
        )
    return Accounts(store), ConsoleSessions(store), audit


def _leave_queue(settings: Settings, name: str) -> None:
    """Signed out everywhere: no longer at the hand-off queue either, so no citizen is
    told a person is coming who is not (the presence lease would run for a while yet)."""
    from si_agent.handoff import create_ticket_store
    from si_agent.session import create_store

    create_ticket_store(create_store(settings)).leave(name)


def _password() -> str:
    from si_agent.errors import AccountError
    from si_agent.staff.accounts import check_password

    if sys.stdin.isatty():
        first = getpass.getpass("password: ")
        check_password(first)
        if getpass.getpass("again: ") != first:
            raise AccountError("weak_password", "the two passwords differ")
        return first
    return check_password(sys.stdin.readline().rstrip("\r\n"))


def _actor() -> str:
    try:
        return f"cli:{getpass.getuser()}"
    except (KeyError, OSError):  # no user name for this uid (a container)
        return "cli:unknown"


def _when(timestamp: float | None) -> str:
    if timestamp is None:
        return "-"
    return datetime.fromtimestamp(timestamp, timezone.utc).strftime("%Y-%m-%d %H:%M")
