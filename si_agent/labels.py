"""Form labels and options as they are compared, by the rpa executor and the agent:
"姓名 *", "姓名：" and "姓　名" are one label; 工商银行 means the option 中国工商银行.
``RESULT_PATTERN`` is where both read a result: a government site's 受理编号."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

# The default ``success`` of an rpa business and of an agent's goal (its groups become
# the output).
RESULT_PATTERN = r"受理编号[:：]\s*(?P<application_no>SI\d{14})"

_NOISE = re.compile(r"[\s*:]+")


def normalize(label: str) -> str:
    """``label`` with full-width forms folded (NFKC), and no spaces, asterisks or colons."""
    return _NOISE.sub("", unicodedata.normalize("NFKC", label))


_GENERIC = frozenset({"银行", "市", "省", "其他"})


def best_option(options: Sequence[str], value: str) -> str | None:
    """The option whose wording means the value: equal once the usual prefix and
    suffix are gone (中国工商银行 / 工商银行, 苏州 / 苏州市), else the one that
    contains it or is contained in it (never through a generic word like 银行)."""
    wanted = _core(value)
    if not wanted:
        return None
    exact = [o for o in options if _core(o) == wanted]
    if exact:
        return exact[0]
    near = [o for o in options if (c := _core(o)) and min(len(c), len(wanted)) >= 2
            and c not in _GENERIC and wanted not in _GENERIC and (c in wanted or wanted in c)]
    return near[0] if len(near) == 1 else None


def _core(text: str) -> str:
    return normalize(text).removeprefix("中国").removesuffix("市")
