"""``Desk``: the hand-off queue's rules, over any ``TicketStore``.

    desk = Desk(store, hours=OfficeHours.parse("mon-fri 09:00-17:00"), capacity=3)
    ticket, offer = desk.open(number, session_id, Reason.ASKED, ...)   # after the turn's save
    desk.take(number, "gh1024")          # one staff member wins; TicketRefused for the others
    desk.reply(number, "gh1024", "您好…")  desk.renew(number, "gh1024")   # the page, every few s
    desk.hand_back(number, "gh1024")      desk.close(number, "gh1024", Outcome.RESOLVED)

Every change is a compare-and-set of the ticket (``TicketStore.save``), retried on a
conflict with the ticket read again; so two staff members taking one ticket at once
(in two processes, on two machines) end with one holder. A hold is a lease of
``lease`` seconds: a console page renews it while open; a page that died lets the
ticket wait again (``Ticket.current``). Staff presence is a lease too (``beat``).

What the citizen is promised (``Offer``) is decided here, once: a person answers on
the page only within office hours, with someone at the queue and room for one more
ticket (``capacity`` open tickets per person present); otherwise the contact text
and the ticket number.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from enum import Enum
from zoneinfo import ZoneInfo

from si_agent import replies
from si_agent.config.hours import OfficeHours
from si_agent.errors import SessionConflict, TicketRefused
from si_agent.handoff.model import Message, Outcome, Reason, Ticket, TicketState, Turn
from si_agent.handoff.store import TicketStore

log = logging.getLogger(__name__)

_RETRIES = 20
LEASE = 30.0  # seconds a hold lasts without a renewal (the page renews every ~10 s)
PRESENCE = 45.0  # seconds a staff member counts as at the queue without a heartbeat


class Offer(str, Enum):
    """What the citizen is told when a ticket is opened (data, rendered by ``offer_text``)."""

    QUEUED = "queued"  # someone is at the queue with room: a person will answer here
    OFF_HOURS = "off_hours"
    NOBODY = "nobody"  # within hours, but no staff member at the queue
    BUSY = "busy"  # people present, but at capacity


@dataclass(frozen=True)
class Opened:
    ticket: Ticket
    offer: Offer
    position: int
    new: bool  # False: the session's open ticket was found instead


class Desk:
    """The hand-off queue (see the module docstring)."""

    def __init__(self, store: TicketStore, *, hours: OfficeHours | None = None,
                 capacity: int = 3, timezone: str = "Asia/Shanghai", lease: float = LEASE,
                 presence: float = PRESENCE, clock: Callable[[], float] = time.time) -> None:
        self.store = store
        self.hours = hours or OfficeHours.parse("mon-fri 09:00-17:00")
        self.capacity = capacity
        self.zone = ZoneInfo(timezone)
        self.lease = lease
        self.presence = presence
        self.clock = clock

    def __repr__(self) -> str:
        return f"Desk({self.store!r}, hours={self.hours.text!r}, capacity={self.capacity})"

    # -- the citizen's side -------------------------------------------------------------

    def reserve(self) -> str:
        """A new ticket number (``H1207-0001``: the day in the office's zone and a counter)."""
        day = datetime.fromtimestamp(self.clock(), self.zone).strftime("%m%d")
        return f"H{day}-{self.store.next_seq(day):04d}"

    def ticket_for(self, session_id: str) -> Ticket | None:
        """The session's open ticket, if any."""
        number = self.store.open_for(session_id)
        ticket = self.store.load(number) if number else None
        return ticket if ticket is not None and ticket.open else None

    def offer(self, ticket: Ticket | None = None) -> tuple[Offer, int]:
        """What a (new, or ``ticket``) waiting ticket may be promised, and its place."""
        now = self.clock()
        tickets = self.queue()
        waiting = [t for t in tickets if t.current(now) == TicketState.WAITING]
        position = next((i + 1 for i, t in enumerate(waiting) if ticket is not None
                         and t.number == ticket.number), len(waiting) + 1)
        if not self.hours.open_at(datetime.fromtimestamp(now, self.zone)):
            return Offer.OFF_HOURS, position
        present = self.store.present(now)
        if not present:
            return Offer.NOBODY, position
        load = len(tickets) + (0 if ticket is not None else 1)
        if load > len(present) * self.capacity:
            return Offer.BUSY, position
        return Offer.QUEUED, position

    def offer_text(self, offer: Offer, number: str, position: int, handoff: str) -> str:
        template = {Offer.QUEUED: replies.HANDOFF_QUEUED, Offer.OFF_HOURS: replies.HANDOFF_OFF_HOURS,
                    Offer.NOBODY: replies.HANDOFF_NOBODY, Offer.BUSY: replies.HANDOFF_BUSY}[offer]
        hours = self.hours.chinese if self.hours.ranges else replies.HANDOFF_OFF_HOURS_ALWAYS
        return replies.render(template, number=number, position=position, hours=hours,
                              handoff=handoff)

    def open(self, number: str, session_id: str, reason: Reason, *, business_id: str | None,
             business_name: str | None, fields: dict[str, str], turns: list[Turn]) -> Opened:
        """Open ticket ``number`` (from ``reserve``) for the session, with its masked
        context; the session's ticket already open is kept instead (``new`` False)."""
        existing = self.ticket_for(session_id)
        if existing is not None:
            offer, position = self.offer(existing)
            return Opened(existing, offer, position, new=False)
        offer, position = self.offer()
        ticket = Ticket(number=number, session_id=session_id, reason=reason,
                        business_id=business_id, business_name=business_name, fields=fields,
                        turns=turns, created=self.clock())
        if not self.store.save(ticket):  # the number was used: never, with reserve()
            raise SessionConflict(number, expected=0, found=None)
        log.info("hand-off ticket %s opened (%s, %s)", number, reason.value, offer.value)
        return Opened(ticket, offer, position, new=True)

    def citizen_says(self, number: str, text: str) -> Message:
        """The citizen's message, to the staff member (stored on the ticket)."""
        return self._change(number, lambda t: t.add("citizen", text), need_open=True)

    def note(self, number: str, text: str) -> Message:
        """A system note for the staff only (the citizen's page does not show it)."""
        return self._change(number, lambda t: t.add("system", text, audience="staff"),
                            need_open=True)

    def citizen_leaves(self, number: str) -> Ticket:
        """The citizen typed 结束人工: the ticket closes as ``left``."""
        def leave(t: Ticket) -> Ticket:
            self._closed(t, Outcome.LEFT, by=None)
            # the citizen's page says so as the turn's reply: a note for staff only
            t.add("system", replies.render(replies.HANDOFF_LEFT, number=t.number),
                  audience="staff")
            return t
        return self._change(number, leave, need_open=True)

    # -- the staff side -----------------------------------------------------------------

    def queue(self) -> list[Ticket]:
        """The open tickets, oldest first."""
        found = (self.store.load(n) for n in self.store.open_numbers())
        return [t for t in found if t is not None and t.open]

    def get(self, number: str) -> Ticket:
        ticket = self.store.load(number)
        if ticket is None:
            raise TicketRefused(number, "not_found")
        return ticket

    def take(self, number: str, staff: str) -> Ticket:
        """Hold the ticket for ``staff`` (a fresh lease); ``TicketRefused`` if another holds
        it or it is closed. Taking one's own ticket again renews it."""
        def take(t: Ticket) -> Ticket:
            now = self.clock()
            holder = t.held_by(now)
            if holder is not None and holder != staff:
                raise TicketRefused(number, "taken", holder)
            if holder is None:
                t.taken_at = now
                t.add("system", replies.render(replies.HANDOFF_JOINED, staff=staff), staff=staff)
            t.state, t.holder, t.lease_until = TicketState.HELD, staff, now + self.lease
            return t
        return self._change(number, take, need_open=True)

    def renew(self, number: str, staff: str) -> Ticket:
        """Extend ``staff``'s hold; ``TicketRefused`` (``not_held``) once it is lost."""
        def renew(t: Ticket) -> Ticket:
            self._holding(t, staff)
            t.lease_until = self.clock() + self.lease
            return t
        return self._change(number, renew, need_open=True)

    def reply(self, number: str, staff: str, text: str) -> Message:
        """A staff member's message to the citizen (renews the hold)."""
        def reply(t: Ticket) -> Message:
            self._holding(t, staff)
            t.lease_until = self.clock() + self.lease
            return t.add("staff", text, staff=staff)
        return self._change(number, reply, need_open=True)

    def hand_back(self, number: str, staff: str) -> Ticket:
        """Back to the assistant: the ticket closes as ``handed_back``; the session's
        business, untouched meanwhile, goes on with the citizen's next message."""
        return self.close(number, staff, Outcome.HANDED_BACK)

    def close(self, number: str, staff: str, outcome: Outcome, note: str | None = None) -> Ticket:
        """Close with ``outcome``: by its holder, or by anyone while it waits."""
        def close(t: Ticket) -> Ticket:
            holder = t.held_by(self.clock())
            if holder is not None and holder != staff:
                raise TicketRefused(number, "taken", holder)
            self._closed(t, outcome, by=staff, note=note)
            text = replies.HANDOFF_RETURNED if outcome == Outcome.HANDED_BACK else \
                replies.render(replies.HANDOFF_ENDED, number=t.number)
            t.add("system", text, staff=staff)
            return t
        return self._change(number, close, need_open=True)

    def beat(self, staff: str) -> None:
        """``staff`` is at the queue (their page calls this every few seconds)."""
        self.store.beat(staff, self.clock() + self.presence)

    def leave(self, staff: str) -> None:
        self.store.leave(staff)

    def present(self) -> list[str]:
        return self.store.present(self.clock())

    # -- helpers ------------------------------------------------------------------------

    def _holding(self, t: Ticket, staff: str) -> None:
        """``staff`` holds ``t``; else ``taken`` (a colleague holds it: say who, as take and
        close do) or ``not_held`` (nobody does: the lease ran out)."""
        holder = t.held_by(self.clock())
        if holder is not None and holder != staff:
            raise TicketRefused(t.number, "taken", holder)
        if holder != staff:
            raise TicketRefused(t.number, "not_held", holder)

    def _closed(self, t: Ticket, outcome: Outcome, *, by: str | None,
                note: str | None = None) -> None:
        t.state, t.outcome, t.closed_at, t.closed_by = TicketState.CLOSED, outcome, \
            self.clock(), by
        t.lease_until = None
        t.note = note

    def _change(self, number: str, change: Callable[[Ticket], object], *, need_open: bool):
        """Apply ``change`` to the stored ticket and save it (compare-and-set, retried)."""
        for _ in range(_RETRIES):
            ticket = self.get(number)
            if need_open and not ticket.open:
                raise TicketRefused(number, "closed")
            result = change(ticket)
            if self.store.save(ticket):
                return result
        raise SessionConflict(number, expected=-1, found=None)
