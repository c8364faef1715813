"""The shared ``Catalog``: versions, replace and remove, and readers that never see
half of a change (each read, and each iteration, stays on one snapshot)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from si_agent.config.loader import load_businesses
from si_agent.config.model import Business
from si_agent.core.catalog import Catalog

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def businesses() -> dict[str, Business]:
    return dict(load_businesses(ROOT / "businesses"))


def renamed(business: Business, name: str, new_id: str | None = None) -> Business:
    return business.model_copy(update={"name": name, "id": new_id or business.id})


def test_reads_like_the_mapping_it_was_given(businesses):
    catalog = Catalog(businesses)
    assert catalog.version == 1
    assert dict(catalog) == businesses
    assert len(catalog) == len(businesses)
    assert "card_loss" in catalog and "nothing" not in catalog
    assert catalog.get("nothing") is None
    assert catalog["card_loss"] is businesses["card_loss"]


def test_is_not_changed_through_the_mapping_it_was_given(businesses):
    given = dict(businesses)
    catalog = Catalog(given)
    given.pop("card_loss")
    assert "card_loss" in catalog and catalog.version == 1


def test_replace_and_remove_bump_the_version(businesses):
    catalog = Catalog(businesses)
    catalog.replace(renamed(businesses["card_loss"], "社保卡挂失（新）"))
    assert catalog.version == 2
    assert catalog["card_loss"].name == "社保卡挂失（新）"
    assert len(catalog) == len(businesses)
    catalog.replace(renamed(businesses["card_loss"], "新业务", "brand_new"))  # a new id
    assert catalog.version == 3 and catalog["brand_new"].name == "新业务"
    catalog.remove("brand_new")
    assert catalog.version == 4 and "brand_new" not in catalog
    with pytest.raises(KeyError):
        catalog.remove("brand_new")
    assert catalog.version == 4  # a refused remove changes nothing


def test_an_iteration_stays_on_the_snapshot_it_began_with(businesses):
    catalog = Catalog(businesses)
    last = list(businesses)[-1]
    for name in ("__iter__", "keys", "values", "items"):
        before = list(getattr(catalog, name)())
        it = iter(getattr(catalog, name)())
        first = next(it)
        catalog.remove(last)  # a key the iteration has not reached yet
        catalog.replace(renamed(businesses["card_loss"], "改名", "added"))
        assert [first, *it] == before  # the rest of the old snapshot, no error
        catalog.replace(businesses[last])
        catalog.remove("added")
    assert dict(catalog) == businesses


def test_concurrent_writers_lose_no_update_and_readers_see_whole_snapshots(businesses):
    catalog = Catalog(businesses)
    template = businesses["card_loss"]
    rounds, writers, readers = 300, 2, 3
    start = threading.Barrier(writers + readers)
    done = threading.Event()
    errors: list[BaseException] = []
    sizes: set[int] = set()

    def write(w: int) -> None:
        start.wait()
        for i in range(rounds):
            catalog.replace(renamed(template, f"w{w}-{i}", f"w{w}-{i}"))
            if i % 2:
                catalog.remove(f"w{w}-{i}")

    def read() -> None:
        start.wait()
        try:
            for _ in range(20_000):
                if done.is_set():
                    break
                snapshot = list(catalog.items())
                assert all(bid == b.id for bid, b in snapshot)
                sizes.add(len(snapshot))
                assert all(catalog.get(bid) is not None for bid in businesses)
        except BaseException as exc:  # reported below, with the thread's own traceback
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(w,)) for w in range(writers)]
    threads += [threading.Thread(target=read) for _ in range(readers)]
    for t in threads:
        t.start()
    for t in threads[:writers]:
        t.join(timeout=60)
    done.set()
    for t in threads[writers:]:
        t.join(timeout=60)
    assert not any(t.is_alive() for t in threads)
    assert not errors, errors[0]
    # Every replace and every remove counted once: no writer overwrote another's change.
    assert catalog.version == 1 + writers * (rounds + rounds // 2)
    kept = {f"w{w}-{i}" for w in range(writers) for i in range(0, rounds, 2)}
    assert set(catalog) == set(businesses) | kept
    assert min(sizes) >= len(businesses)
