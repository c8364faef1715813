"""A consultation's next move: a pure function over its slots, rendered from templates.

A ``type: consult`` business gathers a profile in ordered themes. The engine
(model or rules) only extracts slot values; everything the citizen reads next
comes from here, without a second model call:

- the current theme is the first one with a slot neither collected nor skipped;
- if that is the theme asked before this turn, its ``follow_up`` asks what it
  still misses;
- if the turn completed it (and maybe later ones, given in passing), their
  summaries come first, then the next theme's ``opening``, or its ``follow_up``
  when some of its slots were already given;
- when every theme is complete, the closing: every summary, the recommendation
  lines whose conditions hold (or the default), and the offer of a human adviser.

A skipped slot is not asked again; summaries show it as 未提供.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from si_agent import replies
from si_agent.config.model import Business, Condition, FieldDef, Theme
from si_agent.core.state import SETTLED, FieldStatus
from si_agent.session.model import FieldState
from si_agent.validators import mask

NOT_GIVEN = replies.NOT_GIVEN
_OPS: dict[str, Callable[[Any, Any], bool]] = {
    "==": operator.eq, "!=": operator.ne, "<": operator.lt,
    "<=": operator.le, ">": operator.gt, ">=": operator.ge,
}


def is_open(state: FieldState | None) -> bool:
    """Whether a slot is still to be asked: neither collected nor skipped."""
    return state is None or state.status not in SETTLED


def profile_owner(session_id: str, group_id: str | None) -> str:
    """Where a conversation's consultation profiles are kept in the step-file store:
    per user (session) and conversation, so a group id names only one's own."""
    return f"consult:{session_id}:{group_id or ''}"


def unalias(field: FieldDef, raw: str) -> str:
    """The value a phrase of the slot's ``aliases`` stands for ("没孩子" → "0"), else ``raw``."""
    said = raw.strip(" ，,。.!！")
    for option in field.aliases:
        if said in option.aliases:
            return option.value
    return raw


def open_slots(theme: Theme, fields: Mapping[str, FieldState]) -> list[FieldDef]:
    return [s for s in theme.slots if is_open(fields.get(s.key))]


def current_theme(business: Business, fields: Mapping[str, FieldState]) -> Theme | None:
    """The first theme with an open slot; None when the consultation is complete."""
    return next((t for t in business.themes if open_slots(t, fields)), None)


def shown(field: FieldDef, value: Any) -> str:
    """A slot value as the citizen reads it: with its unit, amounts in 万元, lists joined."""
    if value is None:
        return NOT_GIVEN
    if field.masked:
        return mask(field.type, value)
    if isinstance(value, list):
        return replies.LIST_SEP.join(str(v) for v in value)
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if field.unit == "元" and isinstance(value, (int, float)) and value >= 10_000:
        return replies.render(replies.AMOUNT_WAN, amount=value / 10_000)
    return f"{value}{field.unit or ''}"


def items(business: Business, keys: Iterable[str], fields: Mapping[str, FieldState]) -> str:
    """``标签：值`` pairs joined by "，" (the ``{items}`` of the received template)."""
    return replies.ITEMS_SEP.join(
        replies.render(replies.LABELLED, label=business.field(k).label,
                       text=shown(business.field(k), fields[k].value))
        for k in keys)


def summary(theme: Theme, fields: Mapping[str, FieldState]) -> str:
    values = {}
    for slot in theme.slots:
        st = fields.get(slot.key)
        values[slot.key] = shown(slot, st.value if st and st.status == FieldStatus.COLLECTED else None)
    return replies.render(theme.summary, values)


def ask(theme: Theme, fields: Mapping[str, FieldState]) -> str:
    """The theme's opening if nothing of it is known yet, else what it still misses."""
    missing = open_slots(theme, fields)
    if len(missing) == len(theme.slots):
        return theme.opening
    return replies.render(theme.follow_up, missing=replies.LIST_SEP.join(s.label for s in missing))


def holds(condition: Condition, field: FieldDef, state: FieldState | None) -> bool:
    if state is None or state.status != FieldStatus.COLLECTED or state.value is None:
        return False
    value = state.value
    if condition.op == "contains":
        return isinstance(value, list) and condition.value in value
    want: Any = condition.value
    if isinstance(value, (int, float)) and not isinstance(want, (int, float)):
        try:
            want = float(want)
        except ValueError:
            return False
    elif isinstance(value, str):
        want = str(want)
    try:
        return _OPS[condition.op](value, want)
    except TypeError:
        return False


def recommendation(business: Business, fields: Mapping[str, FieldState]) -> str:
    texts = business.consult
    assert texts is not None
    lines = [r.text for r in texts.recommendations
             if all(holds(c, business.field(c.slot), fields.get(c.slot)) for c in r.when)]
    return "".join(lines) or texts.default_recommendation


def closing(business: Business, fields: Mapping[str, FieldState]) -> str:
    texts = business.consult
    assert texts is not None
    return replies.render(texts.closing,
                          summary="\n".join(summary(t, fields) for t in business.themes),
                          recommendation=recommendation(business, fields))


def summed_up(business: Business, fields: Mapping[str, FieldState],
              asked: Theme | None) -> list[Theme]:
    """The themes the next move sums up: those completed since ``asked``."""
    current = current_theme(business, fields)
    if current is None:
        return []  # the closing sums up every theme
    themes = list(business.themes)
    start = themes.index(asked) if asked in themes else themes.index(current)
    return [t for t in themes[start:themes.index(current)] if not open_slots(t, fields)]


def next_move(business: Business, fields: Mapping[str, FieldState],
              asked: Theme | None) -> str:
    """What to say next, given the theme asked before this turn (``asked``)."""
    current = current_theme(business, fields)
    if current is None:
        return closing(business, fields)
    done = summed_up(business, fields, asked)
    return "\n".join([*(summary(t, fields) for t in done), ask(current, fields)])


def profile(business: Business, fields: Mapping[str, FieldState]) -> dict[str, Any]:
    """The slots worth keeping for a later conversation (collected or skipped)."""
    return {k: st.model_dump() for k, st in fields.items()
            if k in business.field_keys and st.status in SETTLED}
