"""State names and field statuses: the one home of both.

Both are ``StrEnum`` s, so a session stores them as the plain strings
it always did (``"collecting"``, ``"pending"``), and old stored sessions load.

They live here, beside the stored format (``session.model``), because they are
what a session stores: the session package sits below the core (the core reads
sessions; sessions import nothing of the core), so this module imports nothing
of si_agent. ``si_agent.core.state`` gives them their public name as the core's
vocabulary; code above the session package imports them from there.
"""

from __future__ import annotations

from enum import StrEnum


class State(StrEnum):
    """A dialogue state (see ``core.machine`` for the transitions between them)."""

    IDLE = "idle"
    COLLECTING = "collecting"
    STEP_EXECUTING = "step_executing"
    CONFIRMING = "confirming"
    EXECUTING = "executing"
    DONE = "done"
    FAILED = "failed"


# No business in progress: a new one may start.
AT_REST: frozenset[str] = frozenset({State.IDLE, State.DONE})
# A business in progress whose values may still change (a field, a step, the summary).
IN_DIALOGUE: frozenset[str] = frozenset({State.COLLECTING, State.CONFIRMING})


class FieldStatus(StrEnum):
    """Where one field of the business in progress stands."""

    PENDING = "pending"
    COLLECTED = "collected"
    INVALID = "invalid"
    FAILED = "failed"  # the backend refused the submitted value
    SKIPPED = "skipped"  # a consultation's slot the citizen will not give


# Collected or skipped: not asked again.
SETTLED: frozenset[str] = frozenset({FieldStatus.COLLECTED, FieldStatus.SKIPPED})


class Awaiting(StrEnum):
    """What the dialogue waits for when it is not a field (its key) or a step (its id).

    ``Session.awaiting`` holds one of these, a field key or a step id; stored as
    the same strings as before.
    """

    CONFIRM = "confirm"  # yes to the summary
    RETRY = "retry"  # submitting again after a retryable failure
