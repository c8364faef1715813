"""The turn's side of a hand-off to a person (``si_agent.handoff``).

Three moments, each in one function here:

* ``request`` (in a turn: "人工", "投诉", a model's hand-off call, a field failing too
  often): the session's open ticket, or a new number (``Desk.reserve``: the one write of
  a turn, memoised across re-runs; a number left unused by an abandoned turn is only a
  gap), and the text of what will really happen (``Desk.offer_text``: a person here, or
  the contact and the number). The ticket itself is opened by ``open_ticket`` after the
  session is saved (``Effects.handoff``), with the context as the session then holds it,
  masked.
* ``route`` (before the engine, each message): while the session's ticket is held by a
  staff member, the message goes to them (stored on the ticket) and the turn has no
  reply; "结束人工" (and "取消" while held) ends the hand-off. Otherwise the engine takes
  the message as usual: a waiting citizen goes on with the assistant meanwhile.
* ``view``: the ticket as the turn object shows it (the page follows it over SSE).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from si_agent import replies
from si_agent.config.model import Business
from si_agent.core.decision import Rule
from si_agent.core.state import AT_REST, FieldStatus
from si_agent.errors import TicketRefused
from si_agent.flow.result import HandoffView
from si_agent.handoff import Desk, Reason, Ticket, TicketState, Turn
from si_agent.handoff.model import MAX_TURNS
from si_agent.moderation import Verdict
from si_agent.privacy import redact_arguments, redact_text
from si_agent.session.model import Session
from si_agent.turns.masking import Known, mask_text, shown

if TYPE_CHECKING:
    from si_agent.flow.moves import Flow

log = logging.getLogger(__name__)

# "结束人工", "取消排队", "不用人工了": leave the hand-off (waiting or held).
LEAVE = re.compile(r"^(?:请|帮我)?(?:结束|取消|退出|不用|不要|不需要|停止)了?(?:转)?"
                   r"(?:人工|排队|人工服务|人工客服|客服)(?:了|吧|服务)?[。.!！]?$")
# While a person answers, a bare "取消" / "结束" ends the hand-off too (not the business).
LEAVE_HELD = re.compile(r"^(?:取消|结束|退出|结束对话|再见)[。.!！]?$")
COMPLAINT = re.compile(r"投诉|举报")


@dataclass(frozen=True)
class HandoffRequest:
    """A ticket to open after the save (``Effects.handoff``)."""

    number: str
    reason: Reason


def request(t: Flow, reason: Reason | None = None) -> str:
    """The hand-off's text for the reply; the ticket is opened after the save."""
    desk = t.deps.handoff
    if desk is None:  # an embedding without a desk: the contact only
        return replies.render(t.deps.texts.handoff, handoff=t.deps.handoff_text)
    reason = reason or reason_of(t)
    key = ("handoff",)
    if key not in t.memo:
        existing = desk.store.load(t.s.handoff) if t.s.handoff else None
        existing = existing if existing is not None and existing.open else None
        number = existing.number if existing is not None else desk.reserve()
        t.memo[key] = (number, *desk.offer(existing))
    number, offer, position = t.memo[key]
    t.effects.handoff = HandoffRequest(number, reason)
    t.s.handoff = number
    return desk.offer_text(offer, number, position, t.deps.handoff_text)


def reason_of(t: Flow) -> Reason:
    if COMPLAINT.search(t.text):
        return Reason.COMPLAINT
    if t.decision is not None and t.decision.rule is Rule.MODEL:
        return Reason.MODEL
    return Reason.ASKED


def open_ticket(desk: Desk, session: Session, business: Business | None,
                wanted: HandoffRequest) -> Ticket:
    """Open the requested ticket with the saved session's context (masked)."""
    running = business if business is not None and session.state not in AT_REST else None
    known = known_values(session, business)
    opened = desk.open(
        wanted.number, session.session_id, wanted.reason,
        business_id=running.id if running else None,
        business_name=running.name if running else None,
        fields=masked_fields(session, running),
        turns=[Turn(role=m.role, text=mask_text(m.text, known)[0])
               for m in session.transcript[-MAX_TURNS:]])
    return opened.ticket


def masked_fields(session: Session, business: Business | None) -> dict[str, str]:
    """The business's values collected so far, by label, masked as decision records are;
    a name keeps its first character (``张*``), as in the conversation review."""
    if business is None:
        return {}
    values: dict[str, Any] = {}
    for f in business.fields:
        st = session.fields.get(f.key)
        if st is None or st.status != FieldStatus.COLLECTED or st.value is None:
            continue
        value = st.value
        if isinstance(value, (list, tuple)):
            value = "、".join(str(v) for v in value)
        elif isinstance(value, Mapping):
            continue  # a step's data: not for reading
        values[f.key] = str(value)
    masked = redact_arguments(values, business)
    return {business.field(k).label: shown("name", values[k]) if business.field(k).type == "name"
            else str(v) for k, v in masked.items()}


def known_values(session: Session, business: Business | None) -> list[Known]:
    """The session's values, for masking them where the citizen typed them (the
    conversation before the hand-off): names as ``张*``, as ``si_agent.turns`` does."""
    if business is None:
        return []
    found = []
    for f in business.fields:
        st = session.fields.get(f.key)
        if st is None or st.value is None or isinstance(st.value, (Mapping, list, tuple, bytes)):
            continue
        found.append(Known(f.key, f.type, f.label, str(st.value),
                           st.status == FieldStatus.COLLECTED))
    return found


@dataclass(frozen=True)
class Routed:
    """What the hand-off makes of a message: ``reply`` None for the engine; "" while a
    person answers (the message went to them); a text when the hand-off ends. ``clear``:
    the session's ticket is closed, its hint goes."""

    reply: str | None
    ticket: Ticket | None = None
    seq: int = 0
    clear: bool = False


ENGINE = Routed(None)


def route(desk: Desk, number: str | None, text: str) -> Routed:
    """The hand-off's part in the message, for a session whose ticket is ``number``
    (see the module docstring); the desk is written here, once per message."""
    leaving = LEAVE.fullmatch(text.strip())
    ticket = desk.store.load(number) if number else None
    if ticket is None or not ticket.open:
        return Routed(replies.HANDOFF_NONE, clear=True) if leaving else \
            Routed(None, clear=number is not None)
    held = ticket.current() == TicketState.HELD
    if leaving or (held and LEAVE_HELD.fullmatch(text.strip())):
        try:
            closed = desk.citizen_leaves(ticket.number)
        except TicketRefused:  # closed meanwhile
            return Routed(replies.HANDOFF_NONE, clear=True)
        return Routed(replies.render(replies.HANDOFF_LEFT, number=ticket.number), closed,
                      closed.messages[-1].seq if closed.messages else 0, clear=True)
    if not held:
        return ENGINE
    try:
        message = desk.citizen_says(ticket.number, redact_text(text))
    except TicketRefused:
        return ENGINE
    return Routed("", desk.store.load(ticket.number), message.seq)


# Categories whose refused message staff read as the citizen wrote it (numbers masked):
# someone saying they want to die is refused by the moderation so that the assistant
# answers with care and the hotlines instead of taking it as a name or a number; not
# because the words are unfit to read. The person holding the conversation has to know
# what was said to answer it (docs/handoff.md). Other categories (abuse, porn...) are
# named only.
VERBATIM_CATEGORIES = frozenset({"self_harm"})


def refused_note(desk: Desk, number: str | None, text: str, verdict: Verdict,
                 labels: Mapping[str, str], reply: str) -> Ticket | None:
    """A citizen's message refused by the moderation, for the session's ticket ``number``:
    while a staff member holds it, a note for them (the category; the words too for
    ``VERBATIM_CATEGORIES``; what the citizen was told). The open ticket, for the view."""
    ticket = desk.store.load(number) if number else None
    if ticket is None or not ticket.open:
        return None
    if ticket.current() != TicketState.HELD:
        return ticket  # a waiting ticket holds no citizen messages: the assistant had it
    named = "、".join(labels.get(c, c) for c in verdict.categories) or "未分类"
    note = replies.render(replies.HANDOFF_REFUSED_NOTE, categories=named)
    if VERBATIM_CATEGORIES.intersection(verdict.categories):
        note += replies.render(replies.HANDOFF_REFUSED_WORDS, text=redact_text(text))
    note += replies.render(replies.HANDOFF_REFUSED_TOLD, reply=reply)
    try:
        desk.note(ticket.number, note)
    except TicketRefused:  # closed meanwhile
        return None
    return desk.store.load(ticket.number)


def view(ticket: Ticket | None, seq: int = 0) -> HandoffView | None:
    """The open ticket as the turn object shows it (``None`` once it is closed)."""
    if ticket is None or not ticket.open:
        return None
    return HandoffView(number=ticket.number, state=ticket.current().value,
                       staff=ticket.held_by(), seq=seq)
