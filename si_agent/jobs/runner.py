"""Where long-running jobs run: the ``JobRunner`` protocol and an in-process runner.

A long-running executor's job is handed to the runner after the turn that
recorded it was saved; the turn answers at once ("已提交，正在办理…"). The
in-process ``ThreadRunner`` is the embedded default; a distributed queue
(Celery) implements the same one method.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Protocol

log = logging.getLogger(__name__)


class JobRunner(Protocol):
    def submit(self, job_id: str, work: Callable[[str], None]) -> None:
        """Run ``work(job_id)`` soon, outside the caller's thread."""
        ...


class ThreadRunner:
    """Runs jobs on a small pool of daemon threads in this process."""

    def __init__(self, workers: int = 4) -> None:
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="si-job")

    def submit(self, job_id: str, work: Callable[[str], None]) -> None:
        future = self._pool.submit(work, job_id)
        future.add_done_callback(_log_failure)

    def shutdown(self, wait: bool = True) -> None:
        self._pool.shutdown(wait=wait)


def _log_failure(future) -> None:
    exc = future.exception()
    if exc is not None:
        log.error("background job crashed: %s", exc, exc_info=exc)
