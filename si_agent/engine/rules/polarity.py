"""Options a message names inside a negation, and values that hold correction words.

A choice mentioned inside a negation ("不是临时的", "不要最低档", "工行太远…还是建行")
is not chosen: ``blank_negated`` blanks such mentions (same length, so positions
still hold) before values are read. ``clean_value`` keeps a correction frame out of
a stored value ("改回张伟" → "张伟"). The cue words are ``engine.cues``'.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from si_agent.config.model import Business, FieldDef
from si_agent.core import actions as T
from si_agent.core.decision import ToolCall
from si_agent.engine import cues
from si_agent.validators import extract

_CHOICE_TYPES = ("enum", "multi_enum")


def occurrences(word: str, text: str) -> Iterator[int]:
    """Where ``word`` starts in ``text``, every time (overlapping ones too)."""
    at = text.find(word) if word else -1
    while at >= 0:
        yield at
        at = text.find(word, at + 1)


def _mentions(business: Business, text: str) -> list[tuple[int, int]]:
    """Where the business's options (values and aliases) and cities occur in ``text``;
    a mention inside a longer one does not count ("不是我" holds "是我")."""
    spans: set[tuple[int, int]] = set()
    for f in business.fields:
        if f.type not in _CHOICE_TYPES:
            continue
        for option in f.options:
            for word in (option.value, *option.aliases):
                spans.update((at, at + len(word)) for at in occurrences(word, text))
    if any(f.type == "city" for f in business.fields):
        spans |= {(x.start, x.end) for x in extract("city", text)}
    return [(s, e) for s, e in spans
            if not any(s2 <= s and e <= e2 and (e2 - s2) > (e - s) for s2, e2 in spans)]


def negated_mentions(business: Business, text: str) -> list[tuple[int, int]]:
    """The option mentions of ``text`` that stand in a negation's scope."""
    return sorted((s, e) for s, e in _mentions(business, text) if cues.negated(text, s, e))


def blank_negated(business: Business, text: str) -> str:
    """``text`` with negated option mentions blanked (same length)."""
    for s, e in negated_mentions(business, text):
        text = text[:s] + " " * (e - s) + text[e:]
    return text


def other_of_two(field: FieldDef, text: str) -> str | None:
    """The other option of a two-option choice when ``text`` turns one down, names
    neither otherwise, and says why in a clause of its own: "正式的先不要，卡估计还能
    找着" → 临时挂失. A bare "不是临时的" may lead to the choice in the next message:
    None (asked again), as for anything else."""
    if field.type != "enum" or len(field.options) != 2:
        return None
    words = [(o.value, w) for o in field.options for w in (o.value, *o.aliases) if w]
    turned_down: set[str] = set()
    chosen: set[str] = set()
    for value, word in words:
        for at in occurrences(word, text):
            (turned_down if cues.negated(text, at, at + len(word)) else chosen).add(value)
    if len(turned_down) != 1 or chosen - turned_down:
        return None
    parts = [c for c in re.split(r"[\s,，。.!！~～、;；:：…]+", text) if c]
    if not any(all(w not in c for _, w in words) for c in parts):
        return None  # no reason said apart from the refusal
    return next(o.value for o in field.options if o.value not in turned_down)


def clean_value(kind: str, value: str) -> str | None:
    """A value without correction words: the part after a correction frame, or None
    when only the frame is left. Free text keeps words inside it ("单位说我填错了"
    may be a reason); only a frame that opens it is dropped."""
    if not cues.is_correction(value):
        return value
    if kind == "text" and cues.before_frame(value).strip():
        return value
    return cues.corrected_value(value)


def clean_calls(business: Business | None, calls: list[ToolCall]) -> list[ToolCall]:
    """The calls without correction words in any value they would store: a value is
    the part after its frame, or dropped (the field is asked again)."""
    if business is None:
        return calls
    out: list[ToolCall] = []
    for c in calls:
        if c.name == T.PROVIDE_FIELD:
            values = {}
            for key, raw in c.arguments.get("values", {}).items():
                kept = _clean(business, key, raw)
                if kept is not None:
                    values[key] = kept
            if not values:
                continue
            c = c.model_copy(update={"arguments": {**c.arguments, "values": values}})
        elif c.name == T.MODIFY_INFO and c.arguments.get("value") is not None:
            kept = _clean(business, c.arguments.get("field_key", ""), c.arguments["value"])
            args = {k: v for k, v in c.arguments.items() if k != "value"}
            c = c.model_copy(update={"arguments": {**args, **({"value": kept} if kept else {})}})
        out.append(c)
    return out


def _clean(business: Business, key: str, raw: object) -> object | None:
    if not isinstance(raw, str) or key not in business.field_keys:
        return raw
    return clean_value(business.field(key).type, raw)


def touched(business: Business | None, text: str) -> bool:
    """Whether a correction, hedge or filler cue, or an option inside a negation, is in
    ``text``: a decision over it is for a model to check."""
    return cues.touched(text) or (business is not None
                                  and bool(negated_mentions(business, text)))
