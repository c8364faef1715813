"""The conversation review, from the turn-event record, and the list of submissions.

- ``GET /console/conversations``: recent conversations (``si_agent.turns``), filtered by
  business, outcome (done, cancelled, failed, handed off), unanswered questions, the
  citizens' feedback and the reviewers' marks, and by age (``since``: 30m, 2h, 7d);
- ``GET /console/conversations/<id>``: one conversation, each turn with the engine's
  decision (rule and confidence, or the model's tool calls), the fields set (masked),
  knowledge questions and whether they were answered, the job's outcome, the latency,
  the citizen's rating and the review;
- ``POST /console/conversations/<id>/turns/<n>/review``: mark a turn wrong (a note, and
  what the reply should have said) or take the mark back; audited;
- ``GET /console/conversations/<id>/transcript.yaml``: the conversation as a replay
  transcript for ``tests/dialogues*``, masked values replaced by demo values
  (``si_agent.turns.export``); audited;
- ``GET /console/submissions``: the recent submissions and their outcomes, read-only,
  as the audit log keeps them (one row per job, values masked).

Everything shown is masked as the record keeps it; citizens appear only as keyed hashes.
"""

from __future__ import annotations

from datetime import datetime

from flask import Response, current_app, redirect, render_template, request, url_for
from pydantic import BaseModel, Field

from si_agent.audit import AuditEntry, StaffAction, parse_since
from si_agent.server.console import texts
from si_agent.server.console.blueprint import bp, signed_in
from si_agent.server.errors import ApiError
from si_agent.turns import OUTCOMES as CONVERSATION_OUTCOMES
from si_agent.turns import Conversation
from si_agent.turns.export import ExportRefused, transcript_yaml
from si_agent.turns.log import NOTE_CHARS
from si_agent.turns.log import SCAN as TURN_SCAN

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


@bp.get("/submissions")
def submissions_page():
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
        "console/submissions.html",
        rows=rows,
        names=names,
        outcomes=OUTCOMES,
        business=business,
        outcome=outcome,
        since=since_text,
        error=error,
        truncated=len(entries) >= SCAN,
    ), 400 if error else 200


# -- the conversation review (the turn-event record) ---------------------------------

SCAN_CONVERSATIONS = TURN_SCAN  # conversations read for one page
FEEDBACK_FILTERS = {"down": "有“没帮助”评价", "up": "有“有帮助”评价", "any": "有评价"}
CONVERSATION_ID = 64  # longest id accepted in a path


def _controller():
    return current_app.config["SI_CONTROLLER"]


def _conversation(conversation_id: str) -> Conversation:
    found = None
    if len(conversation_id) <= CONVERSATION_ID and conversation_id.isalnum():
        found = _controller().turns.conversation(conversation_id)
    if found is None:
        raise ApiError(404, "no_conversation")
    return found


def _keep(c: Conversation, business: str | None, outcome: str | None, unanswered: bool,
          feedback: str | None, marked: bool, moderated: bool = False) -> bool:
    ratings = c.ratings
    return ((business is None or business in c.businesses)
            and (outcome is None or c.outcome == outcome)
            and (not unanswered or c.unanswered > 0)
            and (feedback is None or (ratings["up"] + ratings["down"] > 0 if feedback == "any"
                                      else ratings[feedback] > 0))
            and (not marked or c.marked > 0)
            and (not moderated or c.moderated > 0))


@bp.app_template_filter("moderation_label")
def moderation_label(category: str) -> str:
    """A moderation category as staff named it in the word list (辱骂), else its id."""
    return _controller().moderation.labels.get(category, category)


@bp.get("/conversations")
def conversations():
    controller = _controller()
    names = {b.id: b.name for b in controller.catalog.values()}
    args = request.args
    business = args.get("business") or None
    outcome = args.get("outcome") or None
    feedback = args.get("feedback") or None
    unanswered = args.get("unanswered") == "1"
    marked = args.get("marked") == "1"
    moderated = args.get("moderated") == "1"
    since_text = args.get("since") or DEFAULT_SINCE
    error = None
    if business is not None and business not in names:
        business, error = None, texts.NO_SUCH_BUSINESS
    if outcome is not None and outcome not in CONVERSATION_OUTCOMES:
        outcome, error = None, texts.NO_SUCH_OUTCOME
    if feedback is not None and feedback not in FEEDBACK_FILTERS:
        feedback, error = None, texts.NO_SUCH_FEEDBACK
    try:
        since = parse_since(since_text)
    except ValueError:
        since_text, since, error = DEFAULT_SINCE, parse_since(DEFAULT_SINCE), texts.BAD_SINCE
    found = controller.turns.recent(since=since)
    rows = [c for c in found if _keep(c, business, outcome, unanswered, feedback, marked,
                                                moderated)]
    return render_template(
        "console/conversations.html", rows=rows, names=names, outcomes=CONVERSATION_OUTCOMES,
        feedbacks=FEEDBACK_FILTERS, business=business, outcome=outcome, feedback=feedback,
        unanswered=unanswered, marked=marked, moderated=moderated, since=since_text,
        error=error,
        truncated=len(found) >= SCAN_CONVERSATIONS,
    ), 400 if error else 200


@bp.get("/conversations/<conversation_id>")
def conversation(conversation_id: str):
    c = _conversation(conversation_id)
    controller = _controller()
    names = {b.id: b.name for b in controller.catalog.values()}
    labels = {b.id: {**texts.AWAITED_STEPS, **{f.key: f.label for f in b.fields},
                     **{st.id: st.label for st in b.steps}} for b in controller.catalog.values()}
    return render_template("console/conversation.html", c=c, names=names, labels=labels,
                           outcomes=CONVERSATION_OUTCOMES, note_chars=NOTE_CHARS,
                           saved=request.args.get("saved"))


@bp.post("/conversations/<conversation_id>/turns/<turn>/review")
def review_turn(conversation_id: str, turn: str):
    c = _conversation(conversation_id)
    number = int(turn) if turn.isdigit() and len(turn) < 6 else 0
    if c.turn(number) is None:
        raise ApiError(404, "no_conversation")
    staff = signed_in()
    wrong = request.form.get("action", "mark") != "unmark"
    note = request.form.get("note", "")
    expected = request.form.get("expected", "")
    if len(note) > NOTE_CHARS or len(expected) > NOTE_CHARS:
        raise ApiError(400, "review_too_long", limit=NOTE_CHARS)
    controller = _controller()
    controller.turns.review(c.id, number, staff.name, wrong=wrong, note=note, expected=expected)
    controller.audit.staff(staff.name, StaffAction.TURN_MARKED if wrong else
                           StaffAction.TURN_UNMARKED, target=f"{c.id}#{number}",
                           detail=note[:200] or None)
    return redirect(url_for("console.conversation", conversation_id=c.id, saved=number,
                            _anchor=f"turn-{number}"), code=303)


@bp.get("/conversations/<conversation_id>/transcript.yaml")
def export_transcript(conversation_id: str):
    c = _conversation(conversation_id)
    controller = _controller()
    staff = signed_in()
    try:
        text = transcript_yaml(c, controller.catalog)
    except ExportRefused as exc:
        return render_template("console/error.html", message=exc.reason, status=400), 400
    controller.audit.staff(staff.name, StaffAction.TRANSCRIPT_EXPORTED, target=c.id,
                           detail=f"{len(c.turns)} turns")
    name = f"review__{c.started:%Y%m%d}_{c.id[:8]}.yaml"
    return Response(text, mimetype="application/x-yaml",
                    headers={"Content-Disposition": f'attachment; filename="{name}"'})
