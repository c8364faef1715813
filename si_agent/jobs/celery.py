"""Jobs on Celery, for more than one machine (``SI_JOB_BACKEND=celery``).

The API process records and claims a job as usual, then ``CeleryRunner``
sends its id to the queue (Redis as broker, ``SI_CELERY_BROKER`` or
``SI_REDIS_URL``). A worker (``si-agent worker``, assembled in
``si_agent.worker``) builds its own controller from the same settings, so it
shares the sessions and job records, takes the job over
(``JobDriver.run_handed_over``) and applies the outcome to the session as a
notice, which the page receives through the event stream.

This module knows only the queue: what a worker does with a job is the
``JobHandler`` given to ``celery_app`` (the API process registers none: it only
sends). It imports neither the app assembly nor the flow.

Delivery is at least once, the job record makes it at most once:

- ``acks_late`` with ``task_reject_on_worker_lost``: a task whose worker dies
  is delivered again; ``visibility_timeout`` (``SI_JOB_VISIBILITY_TIMEOUT``,
  default one hour) must exceed the longest job, or Redis hands a job that is
  still running to a second worker;
- a worker takes a job only from the process that queued it or once its lease
  ran out (its process died); otherwise the task is retried after one lease;
- a job whose executor is resumable runs again with the same idempotency key
  (the rpa executor reopens its draft, and a submitted draft shows its number),
  any other is reported as "outcome unknown".

One task at a time per worker process (``worker_prefetch_multiplier=1``): a
browser job holds its process for minutes.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from si_agent.config.settings import Settings
from si_agent.jobs.model import this_process

log = logging.getLogger(__name__)

TASK = "si_agent.run_job"
INSTALL_HINT = "pip install 'si_agent[jobs]'"

JobHandler = Callable[[str, str], bool]
"""``handle(job_id, handed_by)``: run the job if this process may take it over
now; False when its holder is still alive (the task is retried later)."""


def celery_app(settings: Settings, handle: JobHandler | None = None, *,
               retry_after: float = 60.0) -> Any:
    """The Celery application for ``settings`` (broker and results in Redis).

    ``handle`` runs a delivered job (a worker's); without it the task is only
    declared, for sending. A job ``handle`` declines is retried after
    ``retry_after`` seconds (the job lease).
    """
    try:
        from celery import Celery
    except ImportError as exc:
        raise ImportError(f"SI_JOB_BACKEND=celery needs Celery: {INSTALL_HINT}") from exc
    broker = settings.celery_broker or settings.redis_url
    app = Celery("si_agent", broker=broker, backend=broker)
    app.conf.update(
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        worker_prefetch_multiplier=1,
        broker_transport_options={"visibility_timeout": settings.job_visibility_timeout},
        result_expires=3600,
        task_ignore_result=True,
        broker_connection_retry_on_startup=True,
        worker_hijack_root_logger=False,
    )

    @app.task(name=TASK, bind=True, max_retries=None, shared=False)  # this app's handler
    def run_job(task: Any, job_id: str, handed_by: str) -> None:
        if handle is None:
            raise RuntimeError("this process only queues jobs; run them with `si-agent worker`")
        if not handle(job_id, handed_by):
            log.info("job %s is held by a live process; trying again in %.0f s",
                     job_id, retry_after)
            raise task.retry(countdown=retry_after)

    return app


class CeleryRunner:
    """``JobRunner`` that queues the job for a worker (the ``work`` callable stays
    here: the worker runs the same driver method in its own process)."""

    def __init__(self, settings: Settings) -> None:
        self.app = celery_app(settings)

    def submit(self, job_id: str, work: Callable[[str], None]) -> None:
        self.app.send_task(TASK, args=[job_id, this_process()])
