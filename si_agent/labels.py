"""Form labels as they are compared: "姓名 *", "姓名：" and "姓　名" are one label."""

from __future__ import annotations

import re
import unicodedata

_NOISE = re.compile(r"[\s*:]+")


def normalize(label: str) -> str:
    """``label`` with full-width forms folded (NFKC), and no spaces, asterisks or colons."""
    return _NOISE.sub("", unicodedata.normalize("NFKC", label))
