"""The live event streams of this process (``/api/session/events``,
``/api/session/handoff/events``): bounded, so that citizens waiting can never hold every
server thread.

Each open stream holds one of the worker's threads for as long as it lasts. ``Streams``
hands out at most ``limit`` slots at once per process (``SI_MAX_STREAMS``, by default
half of ``si-agent serve``'s 8 threads): the other threads are left for ordinary requests
(``/healthz``, other citizens' turns). And a session has at most one live stream of a
kind: a new one ends the older (a page loaded again, a second tab, a script opening the
same stream eight times), which is told to come back later.

A request beyond the limit is not refused: it is served as a **poll**, the events that
are due now and then the end of the body, with an ``again`` event (``{"seconds": N}``)
telling the page when to ask again; so the page never misses a message, it only sees
it a few seconds later. A stream that was ended by a newer one ends with ``again``
too (``SUPERSEDED_SECONDS``: two tabs open take turns rather than loop).
"""

from __future__ import annotations

import itertools
import json
import logging
import random
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from flask import Response, current_app, stream_with_context

log = logging.getLogger(__name__)

POLL_AGAIN_SECONDS = 5  # a page served a poll asks again after this (plus up to 2 s)
SUPERSEDED_SECONDS = 15  # a page whose stream a newer one ended asks again after this
HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}


@dataclass
class Slot:
    """One live stream's hold on a thread; ``ended`` is set when a newer stream of the
    same session and kind takes over (the stream stops at its next wait)."""

    key: tuple[str, str]
    streams: Streams | None = None  # None: a poll (no slot held)
    ended: threading.Event = field(default_factory=threading.Event)
    released: bool = False

    @property
    def live(self) -> bool:
        return self.streams is not None

    def wait(self, seconds: float) -> bool:
        """Sleep ``seconds``, or less when a newer stream ends this one; True if it did."""
        if self.streams is None:
            return True  # a poll never waits
        return self.ended.wait(seconds)

    def release(self) -> None:
        if self.streams is not None and not self.released:
            self.released = True
            self.streams._release(self)


class Streams:
    """At most ``limit`` live streams at once, one per session and kind (see the module)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._lock = threading.Lock()
        self._live: dict[tuple[str, str], Slot] = {}
        self.peak = 0

    @property
    def held(self) -> int:
        with self._lock:
            return len(self._live)

    def open(self, kind: str, session: str) -> Slot:
        """A slot for the session's stream of ``kind``: a live one (ending the session's
        older stream of that kind), or a poll's when every slot is taken."""
        key = (kind, session)
        with self._lock:
            older = self._live.pop(key, None)
            if older is not None:
                older.released = True  # its slot passes to this stream
                older.ended.set()
            elif len(self._live) >= self.limit:
                log.info("%d live streams: a %s stream is served as a poll", self.limit, kind)
                return Slot(key)
            slot = Slot(key, self)
            self._live[key] = slot
            self.peak = max(self.peak, len(self._live))
            return slot

    def _release(self, slot: Slot) -> None:
        with self._lock:
            if self._live.get(slot.key) is slot:
                del self._live[slot.key]


def streams() -> Streams:
    return current_app.config["SI_STREAMS"]


def respond(kind: str, session: str, events: Callable[[Slot], Iterator[str]]) -> Response:
    """The SSE response of ``events(slot)``; the generator's first item is taken here, so
    that an error before anything is streamed (the store down: 503) is an HTTP error."""
    slot = streams().open(kind, session)
    stream = _bounded(slot, events(slot))
    try:
        first = [event for event in [next(stream, None)] if event is not None]
    except BaseException:
        slot.release()
        raise
    response = Response(stream_with_context(itertools.chain(first, stream)),
                        mimetype="text/event-stream", headers=HEADERS)
    response.call_on_close(slot.release)
    if not slot.live:
        response.headers["Retry-After"] = str(POLL_AGAIN_SECONDS)
    return response


def _bounded(slot: Slot, events: Iterator[str]) -> Iterator[str]:
    """``events``, then ``again`` for a poll and a superseded stream; the slot released."""
    try:
        yield from events
        if not slot.live:
            yield sse("again", {"seconds": POLL_AGAIN_SECONDS + random.randint(0, 2)})
        elif slot.ended.is_set():
            yield sse("again", {"seconds": SUPERSEDED_SECONDS})
    finally:
        slot.release()


def sse(event: str, data: dict) -> str:
    return f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n"
