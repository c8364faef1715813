"""Submitting: confirmed, or again after a retryable failure (the job runs after the save)."""

from __future__ import annotations

from si_agent.core import actions as A
from si_agent.flow.moves import Flow


def confirm_submit(t: Flow, args: A.NoArgs) -> A.CallOutcome:
    t.fire("confirm")
    t.queue_job()
    return A.applied()


def retry_submit(t: Flow, args: A.NoArgs) -> A.CallOutcome:
    # Offered only after a retryable failure (see core.actions).
    t.fire("retry")
    t.queue_job()
    return A.applied()
