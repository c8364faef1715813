"""State names and field statuses, as the core's vocabulary (``State``, ``FieldStatus``).

Defined in ``si_agent.session.states``, beside the stored format that holds them:
the core imports session models and the session package must not import the core
(that would be an import cycle between the two packages). This module gives them
their public name; the core, the engines and the flow import them from here.
"""

from __future__ import annotations

from si_agent.session.states import AT_REST, IN_DIALOGUE, SETTLED, Awaiting, FieldStatus, State

__all__ = ["AT_REST", "IN_DIALOGUE", "SETTLED", "Awaiting", "FieldStatus", "State"]
