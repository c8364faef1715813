"""``GET /api/session/handoff/events``: a citizen's page follows its hand-off ticket (SSE).

The stream polls the ticket store (shared by every process: a staff member's reply
written by another server process arrives here too) and sends each ticket message
after ``after`` as a ``message`` event, and a ``status`` event whenever the ticket is
taken, returns to the queue (its holder's lease ran out: their page died) or closes.
It ends after the ``closed`` status, or after ``FOLLOW_SECONDS`` (the page opens it
again), holding one server thread meanwhile, as the job events do: both are bounded by
``si_agent.server.streams`` (one live stream per session, at most ``SI_MAX_STREAMS`` per
process; beyond that a request is answered as a poll, the events due now and ``again``).
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator

from flask import Blueprint, current_app, request

from si_agent import replies
from si_agent.handoff import Desk, Ticket, TicketState
from si_agent.server.auth import current_user
from si_agent.server.errors import ApiError
from si_agent.server.identity import token_required
from si_agent.server.streams import Slot, respond, sse

bp = Blueprint("handoff", __name__)
FOLLOW_SECONDS = 60.0  # then the page opens it again: a thread is not held for long
POLL_SECONDS = 0.5
KEEPALIVE_SECONDS = 15.0
NUMBER = re.compile(r"H\d{4}-\d{4,8}")


def _desk() -> Desk:
    return current_app.config["SI_CONTROLLER"].handoff


@bp.get("/api/session/handoff/events")
@token_required
def handoff_events():
    user = current_user()
    number = request.args.get("ticket", "")
    if not NUMBER.fullmatch(number):
        raise ApiError(400, "invalid_ticket")
    try:
        after = max(0, int(request.args.get("after", "0")))
    except ValueError:
        raise ApiError(400, "bad_request") from None
    desk = _desk()
    ticket = desk.store.load(number)  # StoreUnavailable: 503 before anything is streamed
    if ticket is None or ticket.session_id != user:
        raise ApiError(404, "ticket_not_found")
    contact = current_app.config["SI_CONTROLLER"].handoff_text
    return respond("handoff", user, lambda slot: follow(desk, ticket, after, contact, slot=slot))


def follow(desk: Desk, ticket: Ticket, after: int, contact: str, *,
           seconds: float = FOLLOW_SECONDS, slot: Slot | None = None) -> Iterator[str]:
    """The events of ``ticket`` from message ``after`` on (see the module docstring);
    with a poll's ``slot``, those due now only; a live one's ends when a newer takes over."""
    deadline = time.monotonic() + seconds
    last_status: tuple | None = None
    quiet_since = time.monotonic()
    yield ": following\n\n"
    while True:
        now = time.time()
        for m in ticket.messages:
            if m.seq > after:
                after = m.seq
                if m.audience == "staff":
                    continue
                quiet_since = time.monotonic()
                yield _sse("message", m.model_dump(mode="json", exclude={"audience"}))
        state, holder = ticket.current(now), ticket.held_by(now)
        status = (state, holder)
        if status != last_status:
            text = None
            # The person's lease ran out: seen happen on this stream, or (a page loaded
            # again, a poll, a reconnect) found run out on its first look.
            lapsed = (last_status[0] == TicketState.HELD if last_status is not None
                      else ticket.state == TicketState.HELD)
            if lapsed and state == TicketState.WAITING:
                text = replies.render(replies.HANDOFF_LOST, number=ticket.number,
                                      handoff=contact)
            last_status = status
            yield _sse("status", {"number": ticket.number, "state": state.value,
                                  "staff": holder, "text": text})
        if state == TicketState.CLOSED or time.monotonic() >= deadline:
            return
        if time.monotonic() - quiet_since >= KEEPALIVE_SECONDS:
            quiet_since = time.monotonic()
            yield ": keep-alive\n\n"
        if slot is None:
            time.sleep(POLL_SECONDS)
        elif slot.wait(POLL_SECONDS):  # a poll, or a newer stream of the session took over
            return
        found = desk.store.load(ticket.number)
        if found is not None:
            ticket = found


_sse = sse
