"""Placeholders in texts that staff write: ``{name}`` is filled in when the text is shown.

Every configurable text that may contain placeholders (a confirmation text, a
result template, a field's ``why``/``help``, the assistant texts) is checked
here when it is loaded, so a typo such as ``{buisness}`` fails at load rather
than showing up in front of a citizen.
"""

from __future__ import annotations

import difflib
import string
from collections.abc import Iterator


def placeholders(template: str) -> list[str]:
    """The placeholder names in ``template``, in order; ``ValueError`` if it does not parse."""
    return [name for _, name, _, _ in string.Formatter().parse(template) if name is not None]


def template_errors(template: str, allowed: frozenset[str] | None) -> Iterator[str]:
    """What is wrong with ``template``: unparsable braces, non-plain or unknown placeholders.

    ``allowed=None`` accepts any plain name (result templates, filled from a
    backend's answer); an empty set accepts none.
    """
    try:
        names = placeholders(template)
    except ValueError as exc:
        yield f"invalid template: {exc} (write {{{{ and }}}} for literal braces)"
        return
    for name in names:
        if not name.isidentifier():
            yield f"placeholder {{{name}}} must be a plain name such as {{application_no}}"
        elif allowed is not None and name not in allowed:
            if allowed:
                yield (f"unknown placeholder {{{name}}}{did_you_mean(name, allowed)}; allowed: "
                       + ", ".join(f"{{{n}}}" for n in sorted(allowed)))
            else:
                yield (f"unknown placeholder {{{name}}}; this text takes no placeholders "
                       f"(write {{{{ and }}}} for literal braces)")


def did_you_mean(name: str, known: frozenset[str]) -> str:
    """``" (did you mean {amount}?)"`` for the known name closest to ``name`` (a close
    spelling, or one that begins with it: {eta} for {eta_days}), else ``""``."""
    close = difflib.get_close_matches(name, sorted(known), n=1, cutoff=0.75) or sorted(
        (k for k in known if len(name) >= 3 and k.startswith(name)), key=len)[:1]
    return f" (did you mean {{{close[0]}}}?)" if close else ""
