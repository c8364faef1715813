"""A long-running executor stand-in: a web form filled by RPA that waits to be released.

A test holds ``release`` back to watch a submission in progress (its progress note,
``/api/session/events``), then sets it; ``keys`` records each idempotency key it saw,
so a test can count submissions.
"""

from __future__ import annotations

import threading
from typing import Any

from si_agent.executor.base import ExecutorOptions


class SlowPortal:
    """Returns ``{"application_no": number}`` once released; fails if never released."""

    long_running = True
    resumable = True

    class Options(ExecutorOptions):
        pass

    def __init__(self, kind: str, number: str, progress_text: str, timeout: float = 30.0) -> None:
        self.kind = kind
        self.number = number
        self.progress_text = progress_text
        self.timeout = timeout
        self.release = threading.Event()
        self.keys: list[str] = []

    def run(self, business: Any, values: Any, *, idempotency_key: str, options: Any,
            progress: Any = None) -> dict[str, str]:
        self.keys.append(idempotency_key)
        if progress is not None:
            progress(self.progress_text)
        if not self.release.wait(self.timeout):
            raise TimeoutError("the test never released the portal")
        return {"application_no": self.number}
