"""The recognition prompt: words the citizen is likely to say, so that a recogniser
writes 社保 rather than 设保, and 失业金 rather than 十夜金.

Whisper reads the prompt as text said before the clip (at most 224 tokens, the
last ones kept), so it is short: at rest the businesses' names; in a business its
name and first keywords; the awaited field's label last, where it weighs most.
"""

from __future__ import annotations

from collections.abc import Iterable

from si_agent.config.model import Business, FieldDef

MAX_CHARS = 180  # well inside Whisper's 224 prompt tokens for Chinese text
KEYWORDS = 3  # of the business in progress


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
