"""The Celery task as the queue declares it (``si_agent.jobs.celery``) and as a
worker assembles it (``si_agent.worker``): the job handler is the worker's, run
here in-process (``Task.apply``, no broker)."""

from __future__ import annotations

import pytest

pytest.importorskip("celery")

from celery.exceptions import Retry  # noqa: E402

from si_agent.config.settings import Settings  # noqa: E402
from si_agent.jobs.celery import TASK, celery_app  # noqa: E402

SETTINGS = Settings(job_backend="celery", celery_broker="redis://127.0.0.1:1/0")


def test_the_task_runs_the_handler_and_retries_a_job_held_elsewhere():
    seen: list[tuple[str, str]] = []

    def handle(job_id: str, handed_by: str) -> bool:
        seen.append((job_id, handed_by))
        return job_id != "held"

    app = celery_app(SETTINGS, handle, retry_after=7)
    app.tasks[TASK].apply(args=["j1", "host:1"], throw=True)
    with pytest.raises(Retry):
        app.tasks[TASK].apply(args=["held", "host:2"], throw=True)
    assert seen == [("j1", "host:1"), ("held", "host:2")]


def test_the_api_side_only_sends():
    app = celery_app(SETTINGS)
    with pytest.raises(RuntimeError, match="si-agent worker"):
        app.tasks[TASK].apply(args=["j1", "host:1"], throw=True)


def test_the_worker_app_builds_its_controller_on_the_first_task(tmp_path):
    from si_agent.worker import worker_app

    settings = SETTINGS.replace(data_dir=tmp_path, session_store="sqlite", knowledge="none")
    app = worker_app(settings)
    task = app.tasks[TASK]
    task.apply(args=["no-such-job", "host:1"], throw=True)  # nothing to run: done, no retry
    task.apply(args=["no-such-job", "host:1"], throw=True)
    assert (tmp_path / "sessions.db").exists()  # the controller's store, built on the first task
