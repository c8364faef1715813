"""A transcript made ready to be read like typed text.

Recognisers write traditional characters now and then (Whisper often does), long
numbers in groups ("138 0013 8000", "138-0013-8000") or digit by digit in words
("幺三八零…"). ``transcript`` converts to simplified characters (OpenCC ``t2s``),
joins digit groups that make a long number, and writes spoken digit runs as
digits with the validators' own reader (``validators.spoken``). The validators
still decide every value.
"""

from __future__ import annotations

import re

from si_agent.chinese import to_simplified
from si_agent.validators import spoken

# Digit groups apart by a space or a dash, 7 digits or more in all: one number said
# in groups (a date "2025-03-01" has fewer digits per group and stays as it is).
_GROUPED = re.compile(r"(?<![\d-])\d{1,8}(?:[ \-]\d{1,8}){1,5}(?:[ \-]?[Xx])?(?![\d-])")
_MIN_JOINED = 11  # the shortest long number (a mobile number)
# A transcript this long found whole in the prompt is the prompt repeated, not speech
# (a citizen saying one business name, "社保卡申领", is shorter).
ECHO_CHARS = 8


def _join(m: re.Match[str]) -> str:
    joined = re.sub(r"[ \-]", "", m.group())
    return joined if len(joined) >= _MIN_JOINED else m.group()


_LABEL_TAIL = re.compile(r"([^，,。.、；;：:\s]+)[：:]$")


def _awaited_label(prompt: str) -> str:
    """The awaited field's label the prompt ends with ("身份证号：" -> "身份证号"): a
    transcript that is that label, or part of it ("证号"), is the prompt echoed over
    silence or noise, never an answer."""
    match = _LABEL_TAIL.search(prompt)
    return match.group(1) if match else ""


def transcript(text: str, prompt: str = "") -> str:
    """The recogniser's ``text`` normalised (see the module docstring); empty when it
    only repeats a stretch of the prompt (Whisper does that on silence or noise)."""
    # A token cut inside a character leaves U+FFFD; the prompt's last colon is echoed.
    text = to_simplified(text).replace("\ufffd", "").strip().strip(":：")
    core = text.strip("。.，, ")
    if not core or (len(core) >= ECHO_CHARS and core in prompt) or core in _awaited_label(prompt):
        return ""
    text = _GROUPED.sub(_join, text)
    return spoken.read(text).text
