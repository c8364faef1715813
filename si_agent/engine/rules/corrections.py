"""A correction frame and the value it introduces, in collecting and confirming.

"还是改回张伟吧", "李思是错的 应该是李四", "不对，是张伟", "名字应该是张伟",
"手机号给错了，是139…", "不是张伟，是张炜": the new value is what follows the last frame (never the
frame's words); the field is the one named before the frame, the one whose old
value stands before it, or the one field the new value fits.
"""

from __future__ import annotations

from typing import Any

from si_agent.config.model import Business, FieldDef
from si_agent.core.decision import SessionView
from si_agent.engine import cues
from si_agent.engine.rules.extraction import last_clause_value, values_for
from si_agent.engine.rules.mentions import mentioned_field, named_field, whole_message_fits
from si_agent.validators import check, extract

_COUNTED = ("integer", "number", "year")
_CHOICES = ("enum", "multi_enum", "bucket")


def corrected(business: Business, view: SessionView, awaited: str | None,
              text: str) -> dict[str, str] | None:
    """The values a correction frame in ``text`` sets: ``{}`` when no value follows it
    ("哦不对": nothing to store, ask), None when the rules cannot tell the field.

    Without a field named, a take-back is about something said: a collected field
    the new value fits, the one answered last (fields are asked in order) while
    collecting, the only one while confirming; the awaited field only when no
    collected one fits.
    """
    collected = {k: st.value for k, st in view.fields.items() if st.status == "collected"}
    swapped = None if cues.is_correction(text) else cues.not_but(text)
    target = None
    if swapped is not None:  # "不是张伟，是张炜": the old value, said before, names the field
        head, old, value = swapped
        target = _old_value(business, collected, old)
        if target is None:
            return None  # "不是苏州，是无锡" before 苏州 was ever said: a plain answer
    else:
        found_value = cues.corrected_value(text)
        if found_value is None:
            return {}
        value, head = found_value, cues.before_frame(text)
    if head.strip():
        target = (mentioned_field(business, head) or named_field(business, head)
                  or target or _old_value(business, collected, head))
    if target is None:
        found = values_for(business, awaited, value, whole=True)
        if len(found) > 1:
            return found
        # A value typed by what was found in it ("去南京": a city; "农行": the bank's
        # option), else any field the whole value fits.
        def takes(f: FieldDef) -> bool:
            if not found:
                return _fits(f, value)
            key, raw = next(iter(found.items()))
            kind = business.field(key).type
            if kind in _CHOICES:
                return f.key == key
            return _family(f.type) == _family(kind) and _fits(f, raw)

        fits = [f.key for f in business.fields if f.key in collected and takes(f)]
        if len(fits) > 1 and awaited is not None:
            fits = fits[-1:]  # collecting: the field answered last
        if not fits and awaited is not None and takes(business.field(awaited)):
            fits = [awaited]
        if len(fits) != 1:
            return found or None
        target = fits[0]
    new = last_clause_value(business, target, value)  # ("最后一个字是国家的国，张建国")
    if new is None and whole_message_fits(business.field(target), value):
        new = value
    return {target: new} if new is not None else None


def _family(kind: str) -> str:
    return "number" if kind in ("integer", "number") else kind


def _fits(field: FieldDef, value: str) -> bool:
    """Whether ``value`` is a valid value for ``field`` (as a whole, or a value of its
    type inside it: "2012年", "63岁")."""
    if whole_message_fits(field, value):
        return True
    if field.type not in _COUNTED:
        return False
    kind = "year" if field.type == "year" else "number"
    return any(check(field.type, x.raw, **field.validator_options()).ok
               for x in extract(kind, value))


def _old_value(business: Business, collected: dict[str, Any], head: str) -> str | None:
    """The collected field whose value the words before the frame repeat ("刘阳是错的",
    "苏州是错的" for 苏州市)."""
    said = head.strip(" ，,。")
    for key, old in collected.items():
        if isinstance(old, str) and len(old) >= 2 and old in head:
            return key
        f = business.field(key) if key in business.field_keys else None
        if f is not None and said:
            result = check(f.type, said, **f.validator_options())
            if result.ok and result.value == old:
                return key
    return None
