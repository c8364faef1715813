"""What a backend needs on this machine, checked at start-up: ``Missing`` and the checks
the browser-driven parts (the rpa executor, the browser agent) share.

    browser_missing("/usr/bin/chromium")    -> [Missing("Playwright is not installed", ...)]
    unreachable("http://127.0.0.1:8100/x")  -> Missing(..., blocking=False) or None

A ``Missing`` names what is missing and how to fix it, in one line for the
operator (``str(missing)``). A *blocking* one makes the businesses that need it
unavailable online (citizens are told so before they start); a non-blocking one
(a portal that is down now and may come up later) is a warning only.

These checks are cheap: nothing is imported or launched (Playwright is looked
up, not imported), and a portal is asked once with a short timeout.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
from dataclasses import dataclass
from urllib.parse import urlsplit

PROBE_TIMEOUT = 2.0  # seconds for a portal to answer the start-up probe


@dataclass(frozen=True)
class Missing:
    """Something a backend needs and does not have, with the fix."""

    what: str
    fix: str
    blocking: bool = True  # False: a warning only (it may be there later)

    def __str__(self) -> str:
        return f"{self.what}: {self.fix}"


def browser_missing(chromium: str) -> list[Missing]:
    """What driving ``chromium`` through Playwright lacks here: the Python package
    and the browser binary (a path or a name on PATH)."""
    missing = []
    if importlib.util.find_spec("playwright") is None:
        missing.append(Missing(
            "Playwright is not installed",
            "install the rpa extra (pip install 'si_agent[rpa]'; scripts/run.sh installs it)"))
    found = shutil.which(chromium)
    if found is None or not os.access(found, os.X_OK):
        missing.append(Missing(
            f"the browser {chromium} is not there",
            "install Debian's chromium (apt-get install chromium) or set SI_RPA_CHROMIUM "
            "to a Chromium binary"))
    return missing


def unreachable(url: str, *, timeout: float = PROBE_TIMEOUT) -> Missing | None:
    """A non-blocking ``Missing`` when nothing answers at ``url`` now (any HTTP answer,
    even an error status, counts as reachable); None when it answers."""
    import httpx

    try:
        httpx.get(url, timeout=timeout, follow_redirects=False)
    except httpx.HTTPError as exc:
        parts = urlsplit(url)
        return Missing(
            f"the portal {parts.scheme}://{parts.netloc} is not reachable now "
            f"({type(exc).__name__})",
            "start it (the demo portal: scripts/run.sh portal) or check its address; "
            "submissions try it again when citizens submit",
            blocking=False)
    return None
