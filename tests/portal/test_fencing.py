"""Fencing: a stale POST (an old page token, an older attempt, a snapshot another POST
overtook) changes nothing and gets the draft's current page with an out-of-date notice."""

from __future__ import annotations

import sqlite3
import threading
import time

from si_agent.demo_portal import texts
from si_agent.demo_portal.store import PortalStore
from tests.portal.conftest import UNEMPLOYMENT_PAGES, log_in
from tests.portal.page import Page

BASIC, DETAILS = UNEMPLOYMENT_PAGES


def tokens(page: Page) -> dict[str, str]:
    """The hidden page token and attempt input of a form page."""
    return {e["attrs"]["name"]: e["attrs"].get("value", "") for e in page.elements
            if e["tag"] == "input" and e["attrs"].get("type") == "hidden"}


def second_client(app):
    other = app.test_client()
    assert log_in(other).status_code == 303
    return other


def send(client, url: str, data: dict[str, str], action: str) -> Page:
    return Page(client.post(url, data={**data, "action": action}, follow_redirects=True))


def test_a_post_from_a_page_another_window_moved_on_changes_nothing(app, portal, start,
                                                                   applications):
    url = start("unemployment_benefit")
    other = second_client(app)
    mine, theirs = Page(portal.get(url)), Page(other.get(url))
    assert tokens(mine) == tokens(theirs) == {"_rev": "0", "_attempt": ""}
    moved = send(portal, url, {**BASIC, **tokens(mine)}, "next")
    assert moved.text("h2") == ["办理信息"] and tokens(moved)["_rev"] == "1"
    # The other window still shows page 1: its 下一步 must not land on page 2.
    stale = send(other, url, {**BASIC, "phone": "13900139000", **tokens(theirs)}, "next")
    assert stale.status == 409
    assert stale.text("h2") == ["办理信息"] and stale.field_errors() == {}
    assert texts.PAGE_OUT_OF_DATE in stale.alert()
    again = Page(portal.get(url))
    assert again.text("h2") == ["办理信息"] and tokens(again)["_rev"] == "1"
    assert send(portal, url, {**DETAILS, **tokens(again)}, "submit").text("h1") == ["提交成功"]
    [application] = applications()
    assert application["values"]["phone"] == BASIC["phone"]  # not the stale window's


def test_a_held_post_read_before_another_post_cannot_overwrite_it(app, portal, start, tmp_path,
                                                                 applications):
    url = start("unemployment_benefit")
    page = Page(portal.get(url))
    assert portal.post("/_admin/fail_next", json={"delay": 1.5}).status_code == 200
    held: list[Page] = []
    late = threading.Thread(target=lambda: held.append(
        send(portal, url, {**BASIC, "phone": "13900139000", **tokens(page)}, "next")))
    late.start()
    wait_until_fault_taken(tmp_path / "portal.db")  # the held POST read its snapshot
    other = second_client(app)
    first = Page(other.get(url))
    assert send(other, url, {**BASIC, **tokens(first)}, "next").text("h2") == ["办理信息"]
    late.join(timeout=30)
    [stale] = held
    assert stale.status == 409 and stale.text("h2") == ["办理信息"]
    now = Page(other.get(url))
    assert now.by_id("separation_date")["attrs"].get("value", "") == ""
    send(other, url, {**DETAILS, **tokens(now)}, "submit")
    [application] = applications()
    assert application["values"]["phone"] == BASIC["phone"]  # the late POST overwrote nothing


def test_a_post_held_until_the_next_one_lands_just_before_it(app, portal, start, tmp_path,
                                                             applications):
    url = start("unemployment_benefit")
    page = Page(portal.get(url))
    portal.post("/_admin/fail_next", json={"delay": 20, "until_next_post": True})
    held: list[Page] = []
    late = threading.Thread(target=lambda: held.append(
        send(portal, url, {**BASIC, **tokens(page)}, "next")))
    began = time.monotonic()
    late.start()
    wait_until_fault_taken(tmp_path / "portal.db")
    other = second_client(app)
    opened = Page(other.get(url))  # page 1, read while the first POST is held
    assert opened.text("h2") == ["基本信息"] and late.is_alive()
    # Its 下一步 releases the held POST, which lands first: this one is stale now.
    stale = send(other, url, {**BASIC, **tokens(opened), "_attempt": "2"}, "next")
    late.join(timeout=15)
    assert stale.status == 409 and stale.text("h2") == ["办理信息"]
    assert held[0].text("h2") == ["办理信息"] and time.monotonic() - began < 15


def test_an_older_attempt_is_fenced_out(portal, start, applications):
    url = start("unemployment_benefit")
    page = Page(portal.get(url))
    assert send(portal, url, {**BASIC, **tokens(page), "_attempt": "2"},
                "next").text("h2") == ["办理信息"]
    page = Page(portal.get(url))
    old = send(portal, url, {**DETAILS, **tokens(page), "_attempt": "1"}, "submit")
    assert old.status == 409 and old.text("h2") == ["办理信息"] and applications() == []
    done = send(portal, url, {**DETAILS, **tokens(page), "_attempt": "2"}, "submit")
    assert done.text("h1") == ["提交成功"] and len(applications()) == 1
    # A stale post to a submitted draft shows its number (nothing is submitted twice).
    again = send(portal, url, {**DETAILS, **tokens(page), "_attempt": "1"}, "submit")
    assert again.application_no == done.application_no and len(applications()) == 1


def test_a_post_without_tokens_is_still_accepted(start, post):
    url = start("unemployment_benefit")
    assert post(url, BASIC, action="next").text("h2") == ["办理信息"]
    assert post(url, DETAILS).text("h1") == ["提交成功"]


def test_draft_updates_are_compare_and_set(tmp_path):
    store = PortalStore(tmp_path / "p.db")
    draft = store.draft(store.create_draft("unemployment_benefit", 1))
    wins: list[bool] = []
    barrier = threading.Barrier(6)

    def save(n: int) -> None:
        barrier.wait()
        wins.append(store.save_draft(draft, page=1, raw={"phone": str(n)}))

    threads = [threading.Thread(target=save, args=(n,)) for n in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(wins) == [False] * 5 + [True]  # one snapshot, one write
    moved = store.draft(draft.draft_id)
    assert (moved.page, moved.rev) == (1, 1)
    assert store.submit(draft, {"name": "陈静"}) is None  # read before the move
    assert store.save_draft(moved, page=0, raw={}, attempt=3)
    fenced = store.draft(draft.draft_id)
    assert fenced.attempt == 3
    assert not store.save_draft(fenced, page=1, raw={}, attempt=2)
    assert store.submit(fenced, {"name": "陈静"}, attempt=2) is None
    number = store.submit(fenced, {"name": "陈静"}, attempt=3)
    assert number and store.submit(draft, {"name": "陈静"}) == number  # submitted once
    assert [a["application_no"] for a in store.applications()] == [number]


def wait_until_fault_taken(db, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with sqlite3.connect(db) as conn:
            row = conn.execute("SELECT remaining FROM faults").fetchone()
        if row is not None and row[0] == 0:
            return
        time.sleep(0.02)
    raise AssertionError("the held POST never took its fault")
