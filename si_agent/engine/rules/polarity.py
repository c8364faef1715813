"""Options a message names inside a negation, and values that hold correction words.

A choice mentioned inside a negation ("不是临时的", "不要最低档", "工行太远…还是建行")
is not chosen: ``blank_negated`` blanks such mentions (same length, so positions
still hold) before values are read. ``clean_value`` keeps a correction frame out of
a stored value ("改回张伟" → "张伟"). The cue words are ``engine.cues``'.
"""

from __future__ import annotations

from si_agent.config.model import Business
from si_agent.engine import cues

_CHOICE_TYPES = ("enum", "multi_enum")


def _mentions(business: Business, text: str) -> list[tuple[int, int]]:
    """Where the business's options (values and aliases) occur in ``text``; a
    mention inside a longer one does not count ("不是我" holds "是我")."""
    spans: set[tuple[int, int]] = set()
    for f in business.fields:
        if f.type not in _CHOICE_TYPES:
            continue
        for option in f.options:
            for word in (option.value, *option.aliases):
                if not word:
                    continue
                at = text.find(word)
                while at >= 0:
                    spans.add((at, at + len(word)))
                    at = text.find(word, at + 1)
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


def clean_value(kind: str, value: str) -> str | None:
    """A value without correction words: the part after a correction frame, or None
    when only the frame is left. Free text keeps words inside it ("单位说我填错了"
    may be a reason); only a frame that opens it is dropped."""
    if not cues.is_correction(value):
        return value
    if kind == "text" and cues.before_frame(value).strip():
        return value
    return cues.corrected_value(value)
