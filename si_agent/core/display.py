"""How a collected value is shown to the citizen (replies, summaries, the turn object)."""

from __future__ import annotations

from typing import Any

from si_agent.validators import mask


def display(field_type: str, value: Any) -> str:
    """How a field value is shown to the citizen: masked if personal, numbers plain."""
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.2f}".rstrip("0").rstrip(".")
    if isinstance(value, list):  # several choices
        return "、".join(str(v) for v in value)
    return mask(field_type, value)
