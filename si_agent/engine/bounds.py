"""How much of one message the rule engines read, so that no message costs seconds.

A citizen's message states a handful of values in a few clauses; a message of
2,000 characters that repeats a number or a city a thousand times states
nothing more, but every candidate value costs a check per field and every
clause a pass of the consultation's slot rules. So the engines read at most
``MAX_CANDIDATES`` candidate values and ``MAX_CLAUSES`` clauses of a message,
the first ones in text order (the rest is ignored, and logged), and they
choose among overlapping candidates in n log n (``first_disjoint``).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from typing import Protocol, TypeVar

from ..validators.base import Spans

log = logging.getLogger(__name__)

MAX_CANDIDATES = 32  # the test dialogues have at most 6 in a message
MAX_CLAUSES = 40  # the test dialogues have at most 8


class _Span(Protocol):
    @property
    def start(self) -> int: ...

    @property
    def end(self) -> int: ...


S = TypeVar("S", bound=_Span)
T = TypeVar("T")


def first_disjoint(ranked: Iterable[S], limit: int = MAX_CANDIDATES) -> list[S]:
    """The items of ``ranked`` not overlapping a better one, in text order, ``limit`` at most."""
    kept: list[S] = []
    taken = Spans()
    for item in ranked:
        if not taken.overlaps(item.start, item.end):
            kept.append(item)
            taken.add(item.start, item.end)
    kept.sort(key=lambda item: item.start)
    if len(kept) > limit:
        log.info("a message offers %d candidate values; the first %d are read",
                 len(kept), limit)
        del kept[limit:]
    return kept


def first_clauses(clauses: Sequence[T], limit: int = MAX_CLAUSES) -> Sequence[T]:
    """The first ``limit`` clauses of a message."""
    if len(clauses) > limit:
        log.info("a message has %d clauses; the first %d are read", len(clauses), limit)
        return clauses[:limit]
    return clauses
