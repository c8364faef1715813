"""Browsers for the rpa executor and the agent: one Playwright driver and Chromium per
thread (Playwright's sync API is bound to the thread that started it), and a thread
of the executor's own for work asked for elsewhere."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

BROWSER_ARGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking")


class _Browsers(threading.local):
    """One Playwright driver and browser per thread (Playwright's sync API is bound to
    the thread that started it), shared by every executor of the process."""

    playwright: Any = None
    browser: Any = None


_browsers = _Browsers()
# Browser work asked for on a thread that is not a job runner's (a request thread
# discovering a form, the main thread of a command) runs on a thread of its own,
# so a thread never holds two Playwright drivers and request threads start none.
own_thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="si-rpa")


def browser(chromium: str, headed: bool = False) -> Any:
    """This thread's browser, launched on first use."""
    b = _browsers
    if b.browser is None or not b.browser.is_connected():
        from playwright.sync_api import sync_playwright

        if b.playwright is None:
            b.playwright = sync_playwright().start()
        args = [a for a in BROWSER_ARGS if not (headed and a == "--headless")]
        b.browser = b.playwright.chromium.launch(executable_path=chromium, headless=not headed,
                                                 args=args)
    return b.browser


def close_browser() -> None:
    """Close this thread's browser and driver."""
    b = _browsers
    if b.browser is not None:
        b.browser.close()
        b.browser = None
    if b.playwright is not None:
        b.playwright.stop()
        b.playwright = None
