"""The one shared catalog of businesses: business id -> ``Business``.

The controller owns one ``Catalog``; the engines read it and discovery (a
``fields: discover`` business) updates it with ``replace``. Readers never lock:
every read goes to an immutable snapshot (a ``MappingProxyType``) that a writer
swaps in whole, together with the new ``version``. An engine that derives
indexes from the catalog keeps the version it indexed and rebuilds when
``catalog.version`` differs, so nobody keeps a private copy that goes stale.
"""

from __future__ import annotations

import threading
from collections.abc import ItemsView, Iterator, KeysView, Mapping, ValuesView
from types import MappingProxyType

from si_agent.config.model import Business


class Catalog(Mapping[str, Business]):
    """The one shared, read-mostly mapping of business id -> Business."""

    def __init__(self, businesses: Mapping[str, Business]) -> None:
        self._lock = threading.Lock()
        # Version and snapshot swap together, as one tuple, so a reader that takes
        # ``_state`` once sees a version and the businesses it numbers.
        self._state: tuple[int, MappingProxyType[str, Business]] = (
            1, MappingProxyType(dict(businesses)))

    @property
    def version(self) -> int:
        """Starts at 1; one more after every ``replace`` or ``remove``."""
        return self._state[0]

    def replace(self, business: Business) -> None:
        """Put ``business`` in under its id (a new id is added)."""
        with self._lock:
            version, snapshot = self._state
            self._state = (version + 1, MappingProxyType({**snapshot, business.id: business}))

    def remove(self, business_id: str) -> None:
        """Take the business out; an unknown id raises ``KeyError``."""
        with self._lock:
            version, snapshot = self._state
            if business_id not in snapshot:
                raise KeyError(business_id)
            rest = {k: v for k, v in snapshot.items() if k != business_id}
            self._state = (version + 1, MappingProxyType(rest))

    # -- reads: each one goes to a single snapshot ---------------------------

    def __getitem__(self, business_id: str) -> Business:
        return self._state[1][business_id]

    def __iter__(self) -> Iterator[str]:
        return iter(self._state[1])

    def __len__(self) -> int:
        return len(self._state[1])

    def __contains__(self, business_id: object) -> bool:
        return business_id in self._state[1]

    # ``Mapping``'s views would look each key up again, possibly in a newer snapshot
    # (a key removed meanwhile would raise); these stay on the snapshot they began with.
    def keys(self) -> KeysView[str]:
        return self._state[1].keys()

    def values(self) -> ValuesView[Business]:
        return self._state[1].values()

    def items(self) -> ItemsView[str, Business]:
        return self._state[1].items()

    def __repr__(self) -> str:
        version, snapshot = self._state
        return f"Catalog(version={version}, businesses={sorted(snapshot)})"
