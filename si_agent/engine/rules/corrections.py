"""A correction frame and the value it introduces, in collecting and confirming.

"还是改回张伟吧", "李思是错的 应该是李四", "不对，是张伟", "名字应该是张伟",
"手机号给错了，是139…": the new value is what follows the last frame (never the
frame's words); the field is the one named before the frame, the one whose old
value stands before it, or the one field the new value fits.
"""

from __future__ import annotations

from si_agent.config.model import Business
from si_agent.core.decision import SessionView
from si_agent.engine import cues
from si_agent.engine.rules.extraction import values_for
from si_agent.engine.rules.mentions import mentioned_field, named_field, whole_message_fits


def corrected(business: Business, view: SessionView, awaited: str | None,
              text: str) -> dict[str, str] | None:
    """The values a correction frame in ``text`` sets: ``{}`` when no value follows it
    ("哦不对": nothing to store, ask), None when the rules cannot tell the field."""
    value = cues.corrected_value(text)
    if value is None:
        return {}
    head = cues.before_frame(text)
    collected = {k: st.value for k, st in view.fields.items() if st.status == "collected"}
    target = None
    if head.strip():
        target = mentioned_field(business, head) or named_field(business, head)
        target = target or next((k for k, v in collected.items()
                                 if isinstance(v, str) and len(v) >= 2 and v in head), None)
    if target is None:
        found = values_for(business, awaited, value, whole=True)
        if found:
            return found
        fits = [f.key for f in business.fields
                if (f.key == awaited or f.key in collected) and whole_message_fits(f, value)]
        if len(fits) != 1:
            return None
        target = fits[0]
    found = values_for(business, target, value, whole=True)
    new = found.get(target)
    if new is None and whole_message_fits(business.field(target), value):
        new = value
    return {target: new} if new is not None else None
