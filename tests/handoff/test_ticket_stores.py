"""The ticket stores' contract (memory, SQLite, Redis) and the desk's rules on each:
indexes, compare-and-set, one winner when two staff take a ticket at once, a lease
that runs out, presence."""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from si_agent.config.hours import OfficeHours
from si_agent.errors import TicketRefused
from si_agent.handoff import (
    Desk,
    MemoryTicketStore,
    Offer,
    Outcome,
    Reason,
    Ticket,
    TicketState,
    TicketStore,
)
from si_agent.handoff.redis import RedisTicketStore
from si_agent.handoff.sqlite import SQLiteTicketStore

ALWAYS = OfficeHours.parse("always")


@pytest.fixture(params=["memory", "sqlite", "redis"])
def make_store(request, tmp_path) -> Callable[[], TicketStore]:
    """Makes stores on one backend: two calls share the data (two processes' views)."""
    if request.param == "memory":
        shared = MemoryTicketStore()
        return lambda: shared
    if request.param == "sqlite":
        return lambda: SQLiteTicketStore(tmp_path / "sessions.db")
    client = request.getfixturevalue("redis_client")
    prefix = request.getfixturevalue("redis_prefix")
    return lambda: RedisTicketStore(client, prefix + "handoff:")


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 12, 7, 10, 0, tzinfo=ZoneInfo("Asia/Shanghai")).timestamp()

    def __call__(self) -> float:
        return self.now


def desk_on(store: TicketStore, clock: Clock | None = None, **kwargs) -> Desk:
    return Desk(store, hours=kwargs.pop("hours", ALWAYS), clock=clock or Clock(), **kwargs)


def opened(desk: Desk, session: str = "s1", reason: Reason = Reason.ASKED) -> Ticket:
    return desk.open(desk.reserve(), session, reason, business_id="card_apply",
                     business_name="社保卡申领", fields={"身份证号": "3301**********123X"},
                     turns=[]).ticket


def test_save_is_a_compare_and_set_and_keeps_the_indexes(make_store):
    store = make_store()
    ticket = Ticket(number="H1207-0001", session_id="s1", reason=Reason.ASKED, created=1.0)
    assert store.save(ticket) and ticket.version == 1
    stale = store.load("H1207-0001")
    assert stale is not None and stale.version == 1
    assert store.save(ticket)  # version 1 -> 2
    assert not store.save(stale)  # still at 1: refused, nothing written
    other = Ticket(number="H1207-0002", session_id="s2", reason=Reason.COMPLAINT, created=0.5)
    assert store.save(other)
    assert make_store().open_numbers() == ["H1207-0002", "H1207-0001"]  # arrival order
    assert make_store().open_for("s1") == "H1207-0001"
    ticket.state = TicketState.CLOSED
    assert store.save(ticket)
    assert make_store().open_numbers() == ["H1207-0002"]
    assert make_store().open_for("s1") is None
    assert make_store().load("H1207-0001").state == TicketState.CLOSED  # kept a while


def test_numbers_count_per_day_and_never_repeat(make_store):
    store = make_store()
    assert [store.next_seq("1207"), make_store().next_seq("1207"), store.next_seq("1208")] == \
        [1, 2, 1]
    desk = desk_on(store)
    assert desk.reserve() == "H1207-0003"


def test_a_session_has_one_open_ticket(make_store):
    desk = desk_on(make_store())
    first = opened(desk)
    again = desk.open(desk.reserve(), "s1", Reason.COMPLAINT, business_id=None,
                      business_name=None, fields={}, turns=[])
    assert not again.new and again.ticket.number == first.number
    assert [t.number for t in desk.queue()] == [first.number]


def test_two_staff_taking_one_ticket_at_once_one_wins(make_store):
    number = opened(desk_on(make_store())).number
    results: dict[str, object] = {}
    barrier = threading.Barrier(8)

    def take(name: str) -> None:
        desk = desk_on(make_store())  # its own store object: another process's view
        barrier.wait()
        try:
            results[name] = desk.take(number, name).holder
        except TicketRefused as exc:
            results[name] = exc

    threads = [threading.Thread(target=take, args=(f"staff{i}",)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    winners = [name for name, r in results.items() if r == name]
    assert len(winners) == 1
    losers = [r for r in results.values() if isinstance(r, TicketRefused)]
    assert len(losers) == 7 and all(e.why == "taken" and e.holder == winners[0] for e in losers)
    ticket = desk_on(make_store()).get(number)
    assert ticket.holder == winners[0]
    assert [m.text for m in ticket.messages] == [f"人工客服已接入（工号{winners[0]}），请问有什么可以帮您？"]


def test_a_lease_not_renewed_returns_the_ticket_to_the_queue(make_store):
    clock = Clock()
    desk = desk_on(make_store(), clock, lease=30)
    number = opened(desk).number
    desk.take(number, "a")
    clock.now += 20
    desk.renew(number, "a")
    clock.now += 25  # renewed 25 s ago: still held
    assert desk.get(number).held_by(clock.now) == "a"
    with pytest.raises(TicketRefused) as refused:
        desk.take(number, "b")
    assert refused.value.why == "taken"
    clock.now += 10  # the page died: no renewal for 35 s
    assert desk.get(number).current(clock.now) == TicketState.WAITING
    with pytest.raises(TicketRefused) as lost:
        desk.reply(number, "a", "还在吗")
    assert lost.value.why == "not_held"
    assert desk.take(number, "b").holder == "b"


def test_acting_on_a_colleagues_ticket_names_the_holder(make_store):
    desk = desk_on(make_store())
    number = opened(desk).number
    desk.take(number, "alice")
    for act in (lambda: desk.reply(number, "bob", "我来"), lambda: desk.renew(number, "bob"),
                lambda: desk.hand_back(number, "bob")):
        with pytest.raises(TicketRefused) as refused:
            act()
        assert (refused.value.why, refused.value.holder) == ("taken", "alice")


def test_messages_hand_back_and_close(make_store):
    desk = desk_on(make_store())
    number = opened(desk).number
    desk.take(number, "a")
    desk.citizen_says(number, "我的卡一直没寄到")
    desk.reply(number, "a", "我帮您查一下")
    with pytest.raises(TicketRefused):
        desk.reply(number, "b", "不是我的工单")
    ticket = desk.hand_back(number, "a")
    assert ticket.outcome == Outcome.HANDED_BACK and ticket.closed_by == "a"
    assert [(m.seq, m.sender) for m in desk.get(number).messages] == [
        (1, "system"), (2, "citizen"), (3, "staff"), (4, "system")]
    assert desk.ticket_for("s1") is None
    with pytest.raises(TicketRefused) as closed:
        desk.take(number, "a")
    assert closed.value.why == "closed"
    left = opened(desk, "s2")
    assert desk.citizen_leaves(left.number).outcome == Outcome.LEFT


def test_what_a_citizen_is_promised(make_store):
    clock = Clock()  # a Monday, 10:00 in Shanghai
    store = make_store()
    desk = desk_on(store, clock, hours=OfficeHours.parse("mon-fri 09:00-17:00"), capacity=1,
                   presence=45)
    assert desk.offer()[0] == Offer.NOBODY
    desk.beat("a")
    assert desk.offer() == (Offer.QUEUED, 1)
    first = opened(desk)
    assert desk.offer(first) == (Offer.QUEUED, 1)
    assert desk.offer() == (Offer.BUSY, 2)  # one person, capacity one: full
    clock.now += 50  # the staff page stopped beating
    assert desk.offer(first)[0] == Offer.NOBODY
    clock.now += 8 * 3600  # 18:00
    assert desk.offer(first)[0] == Offer.OFF_HOURS
    text = desk.offer_text(Offer.OFF_HOURS, first.number, 1, "12333社保服务热线")
    assert first.number in text and "12333社保服务热线" in text and "周一至周五 09:00-17:00" in text
    assert "稍候" not in text


def test_office_hours_parse_and_refuse_nonsense():
    hours = OfficeHours.parse("mon-fri 09:00-12:00,13:30-17:00; sat 09:00-12:00")
    zone = ZoneInfo("Asia/Shanghai")
    assert hours.open_at(datetime(2026, 12, 7, 9, 0, tzinfo=zone))
    assert not hours.open_at(datetime(2026, 12, 7, 12, 30, tzinfo=zone))
    assert hours.open_at(datetime(2026, 12, 12, 11, 59, tzinfo=zone))  # Saturday
    assert not hours.open_at(datetime(2026, 12, 13, 10, 0, tzinfo=zone))  # Sunday
    assert not OfficeHours.parse("never").open_at(datetime(2026, 12, 7, 10, tzinfo=zone))
    # As citizens read them (the off-hours reply): no English day names.
    assert hours.chinese == "周一至周五 09:00-12:00、13:30-17:00；周六 09:00-12:00"
    assert OfficeHours.parse("Sat,Sun 10:00-16:00").chinese == "周六、周日 10:00-16:00"
    assert OfficeHours.parse("fri-mon 08:00-20:00").chinese == "周五至周一 08:00-20:00"
    for bad in ("weekdays 9-5", "mon-fri", "mon 17:00-09:00", "mon 25:00-26:00"):
        with pytest.raises(ValueError, match="office hours"):
            OfficeHours.parse(bad)
