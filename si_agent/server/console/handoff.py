"""The hand-off queue (``/console/handoff``): tickets of citizens who asked for a person.

- ``GET /console/handoff``: the open tickets in arrival order with their waiting time,
  who holds which; opening it puts the staff member at the queue (``Desk.beat``), and
  its script keeps them there every ``BEAT_SECONDS`` (``POST /console/api/handoff/
  presence``); "离开队列" leaves. Citizens are promised a person only while someone is.
- ``POST /console/handoff/<number>/take``: hold the ticket (a lease; of two staff
  members taking one ticket, one wins, the other is told who has it), then
  ``GET /console/handoff/<number>``: its context (business, masked fields, the last
  turns), the conversation, a reply box, a knowledge lookup that puts an answer in the
  reply box (``POST …/knowledge``), hand back to the assistant, close with an outcome. The page's script renews the lease (``POST /console/api/handoff/<number>/
  renew``) and shows new messages (``GET …/messages?after=``); a page that dies stops
  renewing, and the ticket returns to the queue after ``Desk.lease`` seconds.

Every action (take, reply, hand back, close) is audited (``AuditLog.staff``: who, the
ticket number, never a message's text); heartbeats and renewals are not actions.
"""

from __future__ import annotations

import logging
import time
from datetime import datetime

from flask import current_app, jsonify, redirect, render_template, request, url_for

from si_agent.audit import AuditLog, StaffAction
from si_agent.core.state import State
from si_agent.errors import StoreUnavailable, TicketRefused
from si_agent.flow.controller import Controller
from si_agent.handoff import Desk, Outcome, Ticket, TicketState
from si_agent.privacy import redact_text
from si_agent.server.console import texts
from si_agent.server.console.blueprint import bp, signed_in
from si_agent.session.model import FieldStatus
from si_agent.validators import check, mask

log = logging.getLogger(__name__)

BEAT_SECONDS = 10  # how often the pages beat and renew (Desk.presence, Desk.lease: 3x)
MAX_REPLY = 2000
MAX_QUESTION = 200
MAX_VALUE = 200


def _controller() -> Controller:
    return current_app.config["SI_CONTROLLER"]


def _desk() -> Desk:
    return _controller().handoff


def _audit() -> AuditLog:
    return current_app.config["SI_CONTROLLER"].audit


def clock(at: float) -> str:
    """A time of day in the office's zone (``14:03:27``)."""
    return datetime.fromtimestamp(at, _desk().zone).strftime("%H:%M:%S")


def waited(ticket: Ticket, now: float) -> str:
    """How long the ticket has been open, as staff read it (``3分05秒``)."""
    seconds = max(0, int(now - ticket.created))
    hours, rest = divmod(seconds, 3600)
    return (f"{hours}小时{rest // 60:02d}分" if hours else f"{rest // 60}分{rest % 60:02d}秒")


@bp.get("/handoff")
def handoff():
    staff = signed_in()
    desk = _desk()
    desk.beat(staff.name)
    now = time.time()
    tickets = desk.queue()
    return render_template(
        "console/handoff.html", tickets=tickets, now=now, waited=waited, clock=clock,
        me=staff.name,
        present=desk.present(), hours=desk.hours.text, beat=BEAT_SECONDS,
        error=request.args.get("error"))


@bp.post("/handoff/leave")
def handoff_leave():
    _desk().leave(signed_in().name)
    return redirect(url_for("console.index"), code=303)


@bp.post("/handoff/<number>/take")
def handoff_take(number: str):
    staff = signed_in()
    try:
        _desk().take(number, staff.name)
    except TicketRefused as exc:
        _audit().staff(staff.name, StaffAction.HANDOFF_TAKEN, target=number, outcome="refused",
                       detail=exc.why)
        return _queue_with(_refusal(exc), 409)
    _audit().staff(staff.name, StaffAction.HANDOFF_TAKEN, target=number)
    return redirect(url_for("console.handoff_ticket", number=number), code=303)


@bp.get("/handoff/<number>")
def handoff_ticket(number: str):
    staff = signed_in()
    desk = _desk()
    try:
        ticket = desk.get(number)
    except TicketRefused as exc:
        return _queue_with(_refusal(exc), 404)
    if ticket.held_by() == staff.name:  # a page (re)loaded renews the hold
        ticket = desk.renew(number, staff.name)
    what = texts.REPLY_MASKED_WHAT.get(request.args.get("masked", ""))  # after a reply
    return _ticket_page(ticket, staff.name, notice=texts.REPLY_MASKED.format(what=what)
                        if what else None)


@bp.post("/handoff/<number>/reply")
def handoff_reply(number: str):
    staff = signed_in()
    text = request.form.get("text", "").strip()
    problem = texts.EMPTY_REPLY if not text else (
        texts.REPLY_TOO_LONG.format(limit=MAX_REPLY) if len(text) > MAX_REPLY else None)
    if problem:
        return _ticket_page(_desk().get(number), staff.name, problem, 400)
    desk = _desk()
    ticket = desk.get(number)
    if ticket.held_by() != staff.name:  # refused before the text is checked or audited
        return _refused_on_ticket(number, staff.name, _not_holding(ticket))
    # The same output check as every reply the citizen sees, then personal numbers masked:
    # the text is kept on the ticket for 30 days and shown on the citizen's page.
    verdict = _controller().moderation.check(text, "output")
    if not verdict.clean:
        business = _controller().catalog.get(ticket.business_id) if ticket.business_id else None
        _audit().moderation(ticket.session_id, business, "output", verdict.action.value,
                            verdict.categories)
        _review_moderated(ticket, verdict)
    if verdict.refused:
        _audit().staff(staff.name, StaffAction.HANDOFF_REPLIED, target=number,
                       outcome="refused", detail="moderation: " + ",".join(verdict.categories))
        return _ticket_page(ticket, staff.name, texts.REPLY_REFUSED.format(
            categories=_labels(verdict.categories)), 422, draft=text)  # to edit, not retype
    sent = redact_text(verdict.text)
    try:
        desk.reply(number, staff.name, sent)
    except TicketRefused as exc:
        return _refused_on_ticket(number, staff.name, exc)
    _audit().staff(staff.name, StaffAction.HANDOFF_REPLIED, target=number,
                   detail=f"{len(sent)} chars" + ("; masked" if sent != text else ""))
    masked = "both" if verdict.masked and sent != verdict.text else \
        "words" if verdict.masked else "personal" if sent != text else None
    return redirect(url_for("console.handoff_ticket", number=number,
                            **({"masked": masked} if masked else {})), code=303)


def _review_moderated(ticket, verdict) -> None:
    """A staff reply the moderation masked, refused or flagged is a moderation record of
    the conversation too (the review's 内容检查 filter and analytics count it), after the
    citizen's last turn."""
    controller = _controller()
    session = controller.store.load(ticket.session_id)
    if session is not None:
        controller.turns.moderated(session.session_id, session.started_at, session.turn,
                                   [("output", verdict.action.value, verdict.categories)])


@bp.post("/handoff/<number>/field")
def handoff_field(number: str):
    """Give a value of the citizen's business for them (they said it on the phone, or
    it is on a document they showed): checked by the field's validator and applied as
    their own answer would be; the citizen is told (a message from the staff member,
    the value masked by its type) and the audit log names the field, never the value."""
    staff = signed_in()
    desk, controller = _desk(), _controller()
    ticket = desk.get(number)
    if ticket.held_by() != staff.name:
        return _refused_on_ticket(number, staff.name, _not_holding(ticket))
    business = controller.catalog.get(ticket.business_id or "")
    key = request.form.get("field", "")
    value = request.form.get("value", "").strip()[:MAX_VALUE]
    session = controller.load(ticket.session_id)
    if business is None or session.business_id != business.id \
            or session.state != State.COLLECTING:
        return _ticket_page(ticket, staff.name, texts.FIELD_NOT_COLLECTING.format(
            business=ticket.business_name or "业务"), 409)
    field = next((f for f in business.fields if f.key == key), None)
    if field is None:
        return _ticket_page(ticket, staff.name, texts.FIELD_UNKNOWN, 400)
    checked = check(field.type, value, **field.validator_options())
    if not checked.ok:
        return _ticket_page(ticket, staff.name, texts.FIELD_INVALID.format(
            label=field.label, error=checked.error), 400)
    turn = controller.on_behalf(ticket.session_id, business, key, value)
    state = controller.load(ticket.session_id).fields.get(key)
    if state is None or state.status != FieldStatus.COLLECTED:
        _audit().staff(staff.name, StaffAction.HANDOFF_FIELD_SET, target=number,
                       outcome="refused", detail=field.key)
        return _ticket_page(ticket, staff.name, texts.FIELD_NOT_SET.format(
            label=field.label, reply=redact_text(turn.reply)[:200]), 400)
    shown = mask(field.type, state.value) if field.masked else redact_text(str(state.value))
    try:
        desk.reply(number, staff.name, texts.FIELD_SET_MESSAGE.format(label=field.label,
                                                                       shown=shown))
    except TicketRefused as exc:  # the lease ran out meanwhile: the value is in all the same
        log.info("hand-off %s: value set, the citizen not told: %s", number, exc.why)
    _audit().staff(staff.name, StaffAction.HANDOFF_FIELD_SET, target=number, detail=field.key)
    return _ticket_page(desk.get(number), staff.name,
                        notice=texts.FIELD_SET.format(label=field.label, shown=shown))


@bp.post("/handoff/<number>/knowledge")
def handoff_knowledge(number: str):
    """Look a question up in the knowledge channel (curated answers first, as citizens
    are answered) and put the answer, with its sources, into the reply box to check and
    send: nothing reaches the citizen before the staff member sends it."""
    staff = signed_in()
    ticket = _desk().get(number)
    question = request.form.get("question", "").strip()[:MAX_QUESTION]
    if not question:
        return _ticket_page(ticket, staff.name, texts.KNOWLEDGE_EMPTY, 400)
    answer = _looked_up(question, ticket.business_name)
    if answer is None or getattr(answer, "refused", False) or not answer.sources:
        return _ticket_page(ticket, staff.name, texts.KNOWLEDGE_NONE.format(question=question),
                            404, question=question)
    draft = answer.text.strip()
    missing = [s for s in answer.sources if s not in draft]
    if missing:
        draft += "\n" + texts.KNOWLEDGE_SOURCES.format(
            sources="、".join(f"《{s}》" for s in missing))
    return _ticket_page(ticket, staff.name, notice=texts.KNOWLEDGE_PUT_IN,
                        draft=draft[:MAX_REPLY], question=question)


def _looked_up(question: str, context: str | None):
    """The channel's extractive answer (no model writes it); a curated answer found for
    staff counts no citizen's hit (``read``, as hit testing reads)."""
    knowledge = _controller().knowledge
    try:
        if callable(getattr(knowledge, "read", None)):
            return knowledge.read(question, generate=False, context=context).answer
        return knowledge.answer(question, generate=False, context=context)
    except StoreUnavailable:
        return None


@bp.post("/handoff/<number>/handback")
def handoff_handback(number: str):
    staff = signed_in()
    try:
        _desk().hand_back(number, staff.name)
    except TicketRefused as exc:
        return _refused_on_ticket(number, staff.name, exc)
    _audit().staff(staff.name, StaffAction.HANDOFF_HANDED_BACK, target=number)
    return redirect(url_for("console.handoff"), code=303)


@bp.post("/handoff/<number>/close")
def handoff_close(number: str):
    staff = signed_in()
    outcome = request.form.get("outcome", "")
    if outcome not in texts.CLOSING_OUTCOMES:
        return _ticket_page(_desk().get(number), staff.name, texts.BAD_OUTCOME, 400)
    # kept on the ticket for 30 days: masked as the citizen's messages are (the page asks
    # for no ID numbers in it, and someone will paste one anyway)
    note = redact_text(request.form.get("note", "").strip()[:500]) or None
    try:
        _desk().close(number, staff.name, Outcome(outcome), note)
    except TicketRefused as exc:
        return _refused_on_ticket(number, staff.name, exc)
    _audit().staff(staff.name, StaffAction.HANDOFF_CLOSED, target=number, detail=outcome)
    return redirect(url_for("console.handoff"), code=303)


# -- what the pages' script calls (JSON; the CSRF token in X-CSRFToken) -----------------

@bp.post("/api/handoff/presence")
def handoff_presence():
    staff = signed_in()
    _desk().beat(staff.name)
    return jsonify(present=_desk().present())


@bp.post("/api/handoff/<number>/renew")
def handoff_renew(number: str):
    staff = signed_in()
    desk = _desk()
    try:
        ticket = desk.renew(number, staff.name)
    except TicketRefused as exc:
        return _json_refusal(exc, 409)
    desk.beat(staff.name)
    return jsonify(state=ticket.current().value, lease_until=ticket.lease_until)


@bp.get("/api/handoff/<number>/messages")
def handoff_messages(number: str):
    signed_in()
    try:
        ticket = _desk().get(number)
        after = int(request.args.get("after", "0"))
    except TicketRefused as exc:
        return _json_refusal(exc, 404)
    except ValueError:
        return jsonify(error={"code": "bad_request", "message": "after"}), 400
    return jsonify(state=ticket.current().value, holder=ticket.held_by(),
                   messages=[m.model_dump(mode="json") for m in ticket.messages if m.seq > after])


# -- helpers ------------------------------------------------------------------------------

def _refusal(exc: TicketRefused) -> str:
    return {"taken": texts.TICKET_TAKEN.format(holder=exc.holder), "closed": texts.TICKET_CLOSED,
            "not_found": texts.TICKET_NOT_FOUND}.get(exc.why, texts.TICKET_NOT_HELD)


def _not_holding(ticket: Ticket) -> TicketRefused:
    """Why a staff member who does not hold ``ticket`` may not act on it (who does)."""
    if not ticket.open:
        return TicketRefused(ticket.number, "closed")
    holder = ticket.held_by()
    return TicketRefused(ticket.number, "taken" if holder else "not_held", holder)


def _labels(categories: tuple[str, ...]) -> str:
    """The word list's labels of ``categories`` (辱骂), else the ids."""
    labels = _controller().moderation.labels
    return "、".join(labels.get(c, c) for c in categories) or "-"


def _json_refusal(exc: TicketRefused, status: int):
    return jsonify(error={"code": exc.why, "message": _refusal(exc)}), status


def _queue_with(message: str, status: int):
    desk = _desk()
    staff = signed_in()
    page = render_template(
        "console/handoff.html", tickets=desk.queue(), now=time.time(), waited=waited,
        clock=clock, me=staff.name, present=desk.present(), hours=desk.hours.text, beat=BEAT_SECONDS,
        error=message)
    return page, status


def _refused_on_ticket(number: str, staff: str, exc: TicketRefused):
    if exc.why == "not_found":
        return _queue_with(_refusal(exc), 404)
    return _ticket_page(_desk().get(number), staff, _refusal(exc), 409)


def _ticket_page(ticket: Ticket, staff: str, error: str | None = None, status: int = 200, *,
                 notice: str | None = None, draft: str | None = None, question: str = ""):
    held = ticket.held_by() == staff
    business = _controller().catalog.get(ticket.business_id or "")
    settable = list(business.fields) if business else []
    return render_template(
        "console/handoff_ticket.html", ticket=ticket, held=held, holder=ticket.held_by(),
        state=ticket.current(), closed=ticket.state == TicketState.CLOSED, now=time.time(),
        waited=waited, error=error, notice=notice, draft=draft, question=question, beat=BEAT_SECONDS,
        settable=settable,
        outcomes=texts.CLOSING_OUTCOMES,
        last_seq=ticket.messages[-1].seq if ticket.messages else 0), status
