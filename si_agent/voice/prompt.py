"""The recognition prompt: words the citizen is likely to say, so that a recogniser
writes 社保 rather than 设保, and 失业金 rather than 十夜金.

Whisper reads the prompt as text said before the clip (at most 224 tokens, the
last ones kept), so it is short: at rest the businesses' names; in a business its
name and first keywords; the awaited field's label last, where it weighs most.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from si_agent.config.model import Business, FieldDef
from si_agent.session.model import Session

MAX_CHARS = 180  # well inside Whisper's 224 prompt tokens for Chinese text
KEYWORDS = 3  # of the business in progress
# After numbers read back: what was asked, so that "对" and "不对" are heard as such.
READ_BACK_PROMPT = "号码是这个，对吗？对。不对。是的。"


def recognition_prompt(businesses: Iterable[Business], business: Business | None = None,
                       field: FieldDef | None = None) -> str:
    """The prompt for a clip: the business in progress (or all), then the field awaited."""
    if business is not None:
        words = list(dict.fromkeys((business.name, *business.keywords[:KEYWORDS])))
    else:
        words = [b.name for b in businesses]
    tail = f"{field.label}：" if field is not None else ""
    head = "社会保险，" + "，".join(words) + "。"
    return head[: MAX_CHARS - len(tail)] + tail


def session_prompt(catalog: Mapping[str, Business], session: Session | None) -> str:
    """The prompt for a clip sent in ``session`` (None: a new citizen); after numbers
    read back, the question asked (the answer is a short yes or no)."""
    business = catalog.get(session.business_id) if session and session.business_id else None
    if business is not None and session is not None and session.heard:
        return READ_BACK_PROMPT
    field = None
    if business is not None and session is not None and session.awaiting in business.field_keys:
        field = business.field(session.awaiting)
    return recognition_prompt(catalog.values(), business, field)
