"""``${VAR}`` and ``${VAR:-default}`` substitution in business config strings."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
_ANY_REF = re.compile(r"\$\{[^}]*\}?")


def expand_env(text: str, env: Mapping[str, str] | None = None) -> str:
    """Replace each ``${VAR:-default}`` by the variable's value, or the default.

    An unset variable without a default expands to the empty string; a set but
    empty variable also takes the default (shell ``:-`` semantics).
    """
    env = os.environ if env is None else env

    def sub(match: re.Match[str]) -> str:
        value = env.get(match.group(1))
        return value if value else (match.group(2) or "")

    return _REF.sub(sub, text)


def check_url(url: str) -> str:
    """``url`` if it is an http(s) URL or starts with a ``${VAR}``; else ``ValueError``
    (for option validators: the message reaches staff as a config error)."""
    problems = syntax_errors(url)
    if problems:
        raise ValueError(problems[0])
    if not url.startswith(("http://", "https://", "${")):
        raise ValueError(f"url {url!r} must start with http://, https:// or ${{VAR}}")
    if url.startswith(("http://", "https://")) and "@" in url.split("/", 3)[2]:
        raise ValueError("a URL must not carry a user name or password: credentials go in "
                         "environment variables (login.user_env, login.password_env)")
    return url


def syntax_errors(text: str) -> list[str]:
    """Describe each malformed ``${...}`` reference in ``text`` (empty if none)."""
    return [
        f"malformed environment reference {m.group(0)!r}; use ${{NAME}} or ${{NAME:-default}}"
        for m in _ANY_REF.finditer(text)
        if not _REF.fullmatch(m.group(0))
    ]
