"""Navigation of an rpa job (``Navigation``): opening pages, logging in when the
portal asks, pressing 下一步 or the submit button, the portal's status and the job's
deadline. Credentials are typed only on the login page; a button is pressed only
when it posts to the portal (see ``guarded`` for how the parts of a job fit).
"""

from __future__ import annotations

import logging
import os
import time
from typing import Any
from urllib.parse import urlsplit

from si_agent import origins
from si_agent.config.envsubst import expand_env
from si_agent.errors import ExecutorError
from si_agent.executor import texts
from si_agent.executor.rpa.guarded import GuardedJob, digest, url_path
from si_agent.labels import Button, button_meaning, lone_submit

log = logging.getLogger(__name__)

_SETTLE_MS = 150  # before the submission: the page's last requests reach the guard
_BUTTONS = ("button, input[type=submit], input[type=button], input[type=image], "
            "[role=button]")
# The page's visible, enabled buttons: their words and whether they submit a form
# that has fields (a logout or search-only form's button does not count).
_BUTTONS_JS = """(selector) => [...document.querySelectorAll(selector)].map((el, index) => {
  const type = (el.getAttribute("type") || (el.tagName === "BUTTON" ? "submit" : "")).toLowerCase();
  const name = (el.getAttribute("aria-label") || el.innerText || el.value || el.alt
                || el.title || "").replace(/\\s+/g, " ").trim();
  const form = el.form || el.closest("form");
  const fillable = !!form && form.querySelector(
    "input:not([type=hidden]):not([type=submit]):not([type=button]):not([type=image]), select, textarea");
  return {index, name, submits: !!fillable && (type === "submit" || type === "image"),
          shown: el.getClientRects().length > 0 && !el.disabled};
}).filter((b) => b.shown)"""


class Navigation(GuardedJob):
    """A job that moves between the portal's pages."""

    def _open(self, url: str) -> None:
        self._check_time()
        response = self.page.goto(url)
        self.trace.note(f"open {url_path(url)}")
        if response is not None and response.status == 404 and url == self.job.resume.get(
                "draft"):  # the portal dropped the draft: start a new one
            self.trace.note("the draft is gone: a new one")
            self.placed_before = {}  # nothing of an earlier attempt is in the new draft
            url = expand_env(self.options.url)
            response = self.page.goto(url)
        self._check_status(response)
        self._check_origin()
        if self._on_login_page():
            self._login()
            response = self.page.goto(url)
            self._check_status(response)
            self._check_origin()

    def _on_login_page(self) -> bool:
        """The portal's login page: its URL when configured (a form may have a PIN
        field), else any page asking for a password."""
        login = self.options.login
        here = self.page.url
        if login is not None and login.url:
            want = expand_env(login.url)
            return (origins.origin_of(here) == origins.origin_of(want)
                    and urlsplit(here).path == urlsplit(want).path)
        return (self.guard.policy.allows(here)
                and self.page.locator('input[type="password"]').count() > 0)

    def _login(self) -> None:
        login = self.options.login
        user = os.environ.get(login.user_env) if login else None
        password = os.environ.get(login.password_env) if login else None
        if not user or not password:
            self.trace.note("login asked, but no credentials are configured")
            raise ExecutorError(texts.RPA_LOGIN_FAILED, retryable=False)
        self._check_origin()
        form = self.page.locator("form", has=self.page.locator('input[type="password"]')).first
        button = form.locator('button, input[type="submit"]').first
        target = origins.destination(button)
        if target is not None and not self.guard.policy.allows(target):
            raise self._off_portal(f"the login form posts to {url_path(target)[:80]}")
        form.locator('input:not([type="password"]):not([type="hidden"])').first.fill(user)
        form.locator('input[type="password"]').fill(password)
        with self.page.expect_navigation():
            button.click()
        self._check_origin()
        if self._on_login_page():
            self.trace.note("the portal refused the login")
            assert login is not None  # credentials were found through it
            log.warning("rpa: %s: the portal refused the login; check the account in %s "
                        "and %s", self.business.id, login.user_env, login.password_env)
            raise ExecutorError(texts.RPA_LOGIN_FAILED, retryable=False)
        self.trace.note("logged in")

    def _button(self) -> tuple[str, Any | None]:
        """The button this page's press would press, by what its words mean
        (``labels.button_meaning``, the business's ``next``/``submit`` first): ("next",
        下一步/Continue) if the page has one, else ("submit", 提交/Submit/Apply, else the
        form's one submit button); the button is None when there is neither."""
        found = self.page.evaluate(_BUTTONS_JS, _BUTTONS)
        meant = [button_meaning(b["name"], next_names=[self.options.next],
                                submit_names=[self.options.submit]) for b in found]
        pick = next((i for i, m in enumerate(meant) if m == Button.NEXT), None)
        step = "next"
        if pick is None:
            step = "submit"
            pick = next((i for i, m in enumerate(meant) if m == Button.SUBMIT), None)
        if pick is None:  # a form's lone submit button, whatever its words ("Go", "OK")
            submits = [i for i, b in enumerate(found) if b["submits"]]
            one = lone_submit([found[i]["name"] for i in submits])
            pick = submits[one] if one is not None else None
        if pick is None:
            return "submit", None
        self.trace.note(f"the {step} button: {found[pick]['name'][:40]!r}")
        return step, self.page.locator(_BUTTONS).nth(found[pick]["index"])

    def _press(self) -> str:
        """Press 下一步 if the page has it, else submit; "login" if the portal logged us out."""
        self._check_time()
        step, button = self._button()
        if step == "submit":
            self.progress(texts.RPA_SUBMITTING)
        if button is None:
            self.trace.note("no next or submit button")
            raise ExecutorError(texts.RPA_FORM_CHANGED, retryable=False, resume=self.trace.resume)
        target = origins.destination(button)
        if target is not None and not self.guard.policy.allows(target):
            raise self._off_portal(f"the {step} button posts to {url_path(target)[:80]}")
        if step == "submit":
            self.page.wait_for_timeout(_SETTLE_MS)  # let the page's requests reach the guard
            self._check_origin()
        self.trace.shot(self.page, f"before-{step}")
        # What this draft holds from now on, for a later attempt: the values placed in
        # it (one resuming on a later page counts the earlier pages'), and once the
        # submit is pressed, what was sent.
        state = {**self.trace.resume, "placed": self._placed_state()}
        if step == "submit":
            state["sent"] = digest(self.values)
        self.trace.draft(self.trace.resume.get("draft", self.page.url), **state)
        if self.job.remember is not None:
            self.job.remember(self.trace.resume)
        self.submitted = self.submitted or step == "submit"
        with self.page.expect_navigation() as navigation:
            button.click()
        self.trace.note(f"press {step}")
        self.answered = navigation.value.status if navigation.value is not None else None
        self._check_status(navigation.value)
        self._check_origin()
        if self._on_login_page():  # the session expired mid-job
            self.trace.note("logged out by the portal")
            self._login()
            self._open(self.trace.resume["draft"])
            return "login"
        return step

    def _check_status(self, response: Any) -> None:
        if response is not None and response.status >= 500:
            self.trace.note(f"portal answered {response.status}")
            raise ExecutorError(texts.RPA_PORTAL_DOWN, retryable=True, status=response.status,
                                resume=self.trace.resume or dict(self.job.resume) or None)

    def _check_time(self) -> None:
        if time.monotonic() > self.deadline:
            raise ExecutorError(texts.RPA_PORTAL_DOWN, retryable=True,
                                resume=self.trace.resume or None)
