"""Traditional to Simplified Chinese: one OpenCC ``t2s`` converter for the process.

The rule engine reads messages typed in Traditional, transcripts are normalised, and
the moderation folds both scripts into one; all three use this converter.
"""

from __future__ import annotations

from functools import cache

import opencc


@cache
def t2s() -> opencc.OpenCC:
    return opencc.OpenCC("t2s")


def to_simplified(text: str) -> str:
    """``text`` in Simplified characters ("我要投訴你們" → "我要投诉你们")."""
    return t2s().convert(text)
