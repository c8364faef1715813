"""``GET /console/conversations``: the recent submissions and their outcomes, read-only.

Built from what the audit log already keeps (``si_agent.audit``): one row per
submission (its job), with the business, when it started and ended, the outcome,
the application number, the citizen's values as the audit log holds them (masked)
and a failure's reason (masked); a consultation that concluded is one row too.
Citizens appear only as the audit log's keyed hash, shortened. Filters: business,
outcome and age (``since``: 30m, 2h, 7d). Whole transcripts, unanswered questions
and feedback need a per-turn record (issue 27, part 6) and come with it.
"""

from __future__ import annotations

from datetime import datetime

from flask import current_app, render_template, request
from pydantic import BaseModel, Field

from si_agent.audit import AuditEntry, parse_since
from si_agent.server.console.blueprint import bp

SCAN = 1000  # audit entries read for one page (newest first)
DEFAULT_SINCE = "7d"
USER_CHARS = 8  # of the keyed hash: enough to tell rows of one citizen apart on a page
# What each row's outcome is, from its newest entry, and how staff read it.
OUTCOMES = {"done": "已办结", "failed": "办理失败", "running": "办理中", "concluded": "咨询完成"}


class Submission(BaseModel):
    """One submission (or concluded consultation) as the audit log tells it."""

    key: str
    business: str
    business_name: str
    user: str
    started: datetime
    ended: datetime | None = None
    outcome: str  # a key of OUTCOMES
    channel: str | None = None
    application_no: str | None = None
    values: dict[str, str] = Field(default_factory=dict)
    detail: str | None = None


def submissions(
    entries: list[AuditEntry],
    names: dict[str, str],
    labels: dict[str, dict[str, str]] | None = None,
) -> list[Submission]:
    """``entries`` (newest first) grouped into submissions, newest first; ``labels``
    (business → field key → label) names the values as staff know them."""
    labels = labels or {}
    rows: dict[str, Submission] = {}
    for e in reversed(entries):  # oldest first: each entry updates its submission
        if e.event == "staff":
            continue
        key = e.job_id or f"{e.user}:{e.business}:{e.at.isoformat()}"
        row = rows.get(key)
        if row is None:
            row = rows[key] = Submission(
                key=key,
                business=e.business,
                business_name=names.get(e.business, e.business),
                user=e.user[:USER_CHARS],
                started=e.at,
                outcome="running",
            )
        if e.values:
            named = labels.get(e.business, {})
            row.values = {named.get(k, k): v for k, v in e.values.items()}
        row.application_no = e.application_no or row.application_no
        row.detail = e.detail or row.detail
        if e.event == "submission":
            row.channel = e.channel
        elif e.state in ("done", "failed"):
            row.ended = e.at
            row.outcome = "concluded" if e.outcome == "concluded" else e.state
    return sorted(rows.values(), key=lambda r: r.started, reverse=True)


@bp.get("/conversations")
def conversations():
    controller = current_app.config["SI_CONTROLLER"]
    names = {b.id: b.name for b in controller.catalog.values()}
    business = request.args.get("business") or None
    outcome = request.args.get("outcome") or None
    since_text = request.args.get("since") or DEFAULT_SINCE
    error = None
    if business is not None and business not in names:
        business, error = None, "没有这个业务。"
    if outcome is not None and outcome not in OUTCOMES:
        outcome, error = None, "没有这种办理结果。"
    try:
        since = parse_since(since_text)
    except ValueError:
        since_text, since, error = (
            DEFAULT_SINCE,
            parse_since(DEFAULT_SINCE),
            "时间范围应写成 30m、2h、7d 这样的时长。",
        )
    entries = controller.audit.query(business=business, since=since, limit=SCAN)
    labels = {b.id: {f.key: f.label for f in b.fields} for b in controller.catalog.values()}
    rows = [
        r for r in submissions(entries, names, labels) if outcome is None or r.outcome == outcome
    ]
    return render_template(
        "console/conversations.html",
        rows=rows,
        names=names,
        outcomes=OUTCOMES,
        business=business,
        outcome=outcome,
        since=since_text,
        error=error,
        truncated=len(entries) >= SCAN,
    ), 400 if error else 200
