"""The worker side of ``SI_JOB_BACKEND=celery``: a Celery app whose task runs jobs.

    app = worker_app(settings)        # what ``si-agent worker`` starts
    run_worker(settings, concurrency=1, loglevel="info")

The queue itself (broker, delivery guarantees, the task's name) is
``si_agent.jobs.celery``; this module adds what a worker needs on top: one
controller per worker process, built from the same settings as the API on the
first task, whose job driver takes the job over (``JobDriver.run_handed_over``).
"""

from __future__ import annotations

import threading
from typing import Any

from si_agent.config.settings import Settings
from si_agent.jobs.celery import celery_app


class _JobTaker:
    """Takes jobs over with a controller built on first use (importing the flow
    and the executors only in a process that runs jobs)."""

    def __init__(self, settings: Settings) -> None:
        self._settings = settings
        self._lock = threading.Lock()
        self._controller: Any = None

    def __call__(self, job_id: str, handed_by: str) -> bool:
        return bool(self._built().driver.run_handed_over(job_id, handed_by))

    def _built(self) -> Any:
        with self._lock:
            if self._controller is None:
                from si_agent.app import build_controller

                self._controller = build_controller(self._settings)
            return self._controller


def worker_app(settings: Settings) -> Any:
    """The Celery app of a worker: its task runs the job it is sent."""
    from si_agent.flow.execution import LEASE

    return celery_app(settings, _JobTaker(settings), retry_after=LEASE)


def run_worker(settings: Settings, *, concurrency: int = 1, loglevel: str = "info") -> None:
    """Run a Celery worker in this process until it is stopped."""
    worker_app(settings).worker_main([
        "worker", f"--concurrency={concurrency}", f"--loglevel={loglevel}",
        "--without-gossip", "--without-mingle",
    ])
