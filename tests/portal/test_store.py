"""The portal's store under concurrent submissions of one draft."""

from __future__ import annotations

import threading

from si_agent.demo_portal.store import PortalStore


def test_concurrent_submissions_of_one_draft_make_one_application(tmp_path):
    store = PortalStore(tmp_path / "p.db")
    draft = store.draft(store.create_draft("card_apply", 1))
    numbers: list[str] = []
    barrier = threading.Barrier(8)

    def submit() -> None:
        barrier.wait()
        numbers.append(store.submit(draft, {"name": "王芳"}))

    threads = [threading.Thread(target=submit) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(numbers)) == 1 and len(numbers) == 8
    assert [a["application_no"] for a in store.applications()] == numbers[:1]
    assert store.draft(draft.draft_id).application_no == numbers[0]
