"""How a collected value is shown to the citizen (replies, summaries, the turn object)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from si_agent import replies
from si_agent.config.model import Business
from si_agent.session.model import FieldState
from si_agent.validators import mask


def display(field_type: str, value: Any) -> str:
    """How a field value is shown to the citizen: masked if personal, numbers plain."""
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.2f}".rstrip("0").rstrip(".")
    if isinstance(value, list):  # several choices
        return replies.LIST_SEP.join(str(v) for v in value)
    return mask(field_type, value)


def recorded_items(business: Business, keys: Iterable[str],
                   fields: Mapping[str, FieldState]) -> str:
    """The ``{items}`` of ``replies.RECORDED``: each field's label and shown value."""
    return replies.LIST_SEP.join(
        replies.render(replies.RECORDED_ITEM, label=business.field(k).label,
                       value=display(business.field(k).type, fields[k].value))
        for k in keys)
