"""``api.kind: rpa``: fill a government web form with Playwright and read back what failed.

    api:
      kind: rpa
      options:
        url: ${SI_PORTAL_URL:-http://127.0.0.1:8100}/forms/social_transfer
        login: {url: ..., user_env: SI_PORTAL_USER, password_env: SI_PORTAL_PASSWORD}
        fields: {from_city: 转出地}      # field key -> form label; the rest by label and synonyms
        fixed: {证件类型: 居民身份证, 我已阅读并同意承诺书: true}  # controls the business always sets
        submit: 提交申请
        success: "受理编号[:：]\\s*(?P<application_no>SI\\d{14})"
        allowed_origins: [https://sso.example.gov.cn]  # other origins the portal uses

A job opens the form (logging in with credentials from the environment when
the portal asks), and on every page of it perceives the controls
(``form.perceive``), fills those matched to the business's fields and the
``fixed`` ones, and presses 下一步 or the submit button. Then it reads the
result: the success pattern gives the result dict; controls announced invalid
become per-field statuses (填写成功 / 填写失败 + the form's reason / 未填写) and an
``ExecutorError`` whose ``field_errors`` send the dialogue back to collect just
those fields. The error's ``resume`` holds the form's draft URL, so the flow's
next submission continues the same draft instead of starting a second
application; a draft already submitted shows its number, which is taken as the
result (no second submission).

A job taken over after its worker died must not trip over the dead attempt's
late requests (``si_agent.executor.rpa.fencing``): each post carries the
attempt's number where the site fences attempts (``attempt_field``), and a page
that moved under the job (errors only on controls this press never filled, on
another page; or a 409 answer to a stale post) is perceived again, not taken
for the form refusing the citizen's values.

Each job keeps a trace under ``$SI_DATA_DIR/rpa/<job id>/`` (readable by the
service user only), one folder per attempt, written as the job goes: the action
log with personal values masked, the per-field table and a screenshot per page.
Traces older than ``SI_RPA_RETENTION_DAYS`` are deleted when a job starts. The
browser is Debian's Chromium (``SI_RPA_CHROMIUM``), one per worker thread, with a
fresh context per job.

The job's browser stays on the portal (``si_agent.origins``): a
request to an origin other than ``url``'s and ``allowed_origins`` is aborted, and
a navigation or data sent elsewhere ends the job (``RPA_UNSAFE_SITE``, or
``RPA_UNSAFE_SUBMITTED`` once the submit button was pressed) with the blocked
request in the trace. Credentials are typed only on the page at ``login.url``
(origin and path), results and refusals are read only from the portal's pages,
and a saved draft is resumed only if it is on the portal.
"""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import threading
import time
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import urlsplit

from pydantic import BaseModel

from si_agent import origins
from si_agent.config.envsubst import expand_env
from si_agent.config.model import Business
from si_agent.errors import ExecutorError, ModelUnavailable
from si_agent.executor import texts
from si_agent.executor.base import ExecutorBase, JobContext, Progress
from si_agent.executor.rpa import browsers, discover
from si_agent.executor.rpa.fencing import (
    STALE_POST,
    carry,
    fencing_token,
    page_moved,
    shown_values,
)
from si_agent.executor.rpa.form import Control, choose, css, match, normalize, perceive
from si_agent.executor.rpa.options import RpaOptions
from si_agent.executor.rpa.trace import FAILED, FILLED, UNFILLED, FieldStatus, Trace
from si_agent.validators import mask

log = logging.getLogger(__name__)
_SETTLE_MS = 150  # before the submission: the page's last requests reach the guard


class RpaExecutor(ExecutorBase):
    kind: ClassVar[str] = "rpa"
    Options: ClassVar[type[BaseModel]] = RpaOptions
    long_running: ClassVar[bool] = True
    resumable: ClassVar[bool] = True  # a draft already submitted is read, not submitted again
    takes_job: ClassVar[bool] = True
    discovers: ClassVar[bool] = True

    def __init__(self, trace_dir: Path, *, chromium: str = "/usr/bin/chromium",
                 retention_days: int = 7, headed: bool = False, decider: Any = None) -> None:
        from si_agent.agent import FormPolicy

        self.trace_dir = trace_dir
        self.chromium = chromium
        self.retention_days = retention_days
        self.headed = headed
        self.decider = decider or FormPolicy()  # for the agent, when matching falls short

    @classmethod
    def from_settings(cls, settings: Any) -> RpaExecutor:
        """With a model configured (SI_LLM_*), the agent decides with it; else offline."""
        decider = None
        if settings.llm_base_url:
            from si_agent.agent import ModelDecider

            decider = ModelDecider.from_settings(settings)
        return cls(settings.data_dir / "rpa", chromium=str(settings.rpa_chromium),
                   retention_days=settings.rpa_retention_days, decider=decider)

    def discovered(self, business: Business, options: RpaOptions) -> Business:
        """``business`` (``fields: discover``) with the fields its form asks for: from
        the cache, or read from the form now (``si_agent.executor.rpa.discover``)."""
        cached = discover.load_cached(self.trace_dir, business.id)
        url = expand_env(options.url)
        if cached is None or cached.url != url:
            cached = browsers.own_thread.submit(self.discover, business, options).result()
        return cached.business(business)

    def discover(self, business: Business, options: RpaOptions) -> discover.DiscoveredForm:
        """Open the form, read its first page's required controls, cache the fields."""
        if threading.current_thread() is threading.main_thread():
            return browsers.own_thread.submit(self.discover, business, options).result()
        trace = Trace(self.trace_dir / f"discover-{business.id}",
                      self.trace_dir / "drafts" / f"discover-{business.id}.json")
        policy = _policy(options, trace)
        context = self._browser().new_context(locale="zh-CN", service_workers="block")
        try:
            page = context.new_page()
            guard = origins.guard(context, policy)  # before the page's first request
            page.set_default_timeout(options.action_timeout * 1000)
            job = _Job(business, {}, options, page, trace, None, JobContext(id="discover"),
                       self.decider, guard)

            def read_form() -> discover.DiscoveredForm:
                job._open(expand_env(options.url))
                return job.discover_page()

            found = job.guarded(read_form)
        except ExecutorError:
            raise
        except Exception as exc:  # the portal is not answering
            trace.note(f"browser error: {type(exc).__name__}")
            raise ExecutorError(texts.RPA_PORTAL_DOWN, retryable=True) from None
        finally:
            trace.save()
            _close_quietly(context)
        return found

    def run(self, business: Business, values: Mapping[str, Any], *, idempotency_key: str,
            options: RpaOptions, progress: Progress | None = None,
            job: JobContext | None = None) -> dict:
        if threading.current_thread() is threading.main_thread():  # a command, a test
            return browsers.own_thread.submit(self.run, business, values, idempotency_key=idempotency_key,
                                      options=options, progress=progress, job=job).result()
        job = job or JobContext(id=idempotency_key[:16])
        self._purge_traces()
        # The draft this data was last sent to: after a crash or a "重试" the same key
        # opens it again (a submitted draft shows its number, nothing is sent twice).
        drafts = self.trace_dir / "drafts"
        drafts.mkdir(parents=True, exist_ok=True, mode=0o700)
        known = drafts / f"{idempotency_key}.json"
        if not job.resume and known.is_file():
            job = replace(job, resume=json.loads(known.read_text("utf-8")))
        trace = Trace(self.trace_dir / (job.id or idempotency_key[:16]), known,
                      attempt=job.attempt)
        policy = _policy(options, trace)
        context = self._browser().new_context(locale="zh-CN", service_workers="block")
        try:
            page = context.new_page()
            guard = origins.guard(context, policy)  # before the page's first request
            page.set_default_timeout(options.action_timeout * 1000)
            work = _Job(business, values, options, page, trace, progress, job, self.decider,
                        guard)
            return work.guarded(work.run)
        except ExecutorError:
            raise
        except ModelUnavailable as exc:  # the agent's model, not the portal, is down
            trace.note(f"model unavailable: {exc}")
            log.warning("rpa job %s for %s: the agent's model is unavailable: %s",
                        job.id, business.id, exc)
            raise ExecutorError(texts.RPA_MODEL_DOWN, retryable=True,
                                resume=trace.resume or dict(job.resume) or None) from None
        except Exception as exc:  # Playwright's timeouts and errors: the portal is not answering
            trace.note(f"browser error: {type(exc).__name__}")
            log.warning("rpa job %s for %s: %s", job.id, business.id, type(exc).__name__)
            raise ExecutorError(texts.RPA_PORTAL_DOWN, retryable=True,
                                resume=trace.resume or dict(job.resume) or None) from None
        finally:
            trace.save()
            _close_quietly(context)

    def _browser(self) -> Any:
        return browsers.browser(self.chromium, self.headed)

    def close(self) -> None:
        """Close the browser of this thread and of the executor's own thread (job
        runner threads' close when the process ends)."""
        browsers.close_browser()
        browsers.own_thread.submit(browsers.close_browser).result()

    def _purge_traces(self) -> None:
        if not self.trace_dir.is_dir():
            return
        cutoff = time.time() - self.retention_days * 86400
        # Job traces and drafts only: forms/ is the discovery cache, kept.
        for path in self.trace_dir.iterdir():
            if path.is_dir() and path.name not in ("drafts", "forms") \
                    and path.stat().st_mtime < cutoff:
                shutil.rmtree(path, ignore_errors=True)
        for path in self.trace_dir.glob("drafts/*.json"):
            if path.stat().st_mtime < cutoff:
                path.unlink(missing_ok=True)


class _Job:
    """One run of one form."""

    def __init__(self, business: Business, values: Mapping[str, Any], options: RpaOptions,
                 page: Any, trace: Trace, progress: Progress | None, job: JobContext,
                 decider: Any, guard: origins.Guard) -> None:
        self.business, self.values, self.options = business, values, options
        self.page, self.trace, self.job, self.decider = page, trace, job, decider
        self.guard = guard
        # The application may have been sent: the submit button was pressed, or an
        # earlier attempt's draft is resumed (what the citizen is told on leaving).
        self.submitted = bool(job.resume.get("draft"))
        self.left = False  # the job was stopped for leaving the portal
        self.progress = progress or (lambda text: None)
        self.deadline = time.monotonic() + options.job_timeout
        self.taken: dict[str, Control] = {}  # business key -> control filled, over all pages
        self.matched: dict[str, Control] = {}  # business key -> control it fits, all pages
        self.token = fencing_token(job)  # this attempt's number, posted where the site fences
        self.put: dict[str, str] = {}  # control key -> the value this job left in it
        self.answered: int | None = None  # the HTTP status of the last press

    # -- the origin policy (si_agent.origins) ---------------------------

    def guarded(self, work: Any) -> Any:
        """``work()``, ended as "left the portal" when the guard blocked a navigation or
        data leaving it (whatever else went wrong meanwhile: a failed navigation, a
        timeout), or when it finished after such a block."""
        try:
            result = work()
        except Exception:
            if self.guard.fatal and not self.left:
                raise self._off_portal(self.guard.fatal[0].describe()) from None
            raise
        if self.guard.fatal:
            raise self._off_portal(self.guard.fatal[0].describe())
        return result

    def _off_portal(self, reason: str) -> ExecutorError:
        """The job's end when the portal's page tried to leave the portal."""
        self.left = True
        self.trace.note(f"off the portal: {reason}")
        log.warning("rpa job %s for %s: stopped, the page left the portal (%s)", self.job.id,
                    self.business.id, reason)
        message = texts.RPA_UNSAFE_SUBMITTED if self.submitted else texts.RPA_UNSAFE_SITE
        return ExecutorError(message, retryable=False, resume=self.trace.resume or None)

    def _check_origin(self) -> None:
        """Raise unless the page is on the portal and nothing tried to leave it."""
        if self.guard.fatal:
            raise self._off_portal(self.guard.fatal[0].describe())
        if not self.guard.policy.allows(self.page.url):
            raise self._off_portal(f"the page is at {_path(self.page.url)[:80]}")

    def run(self) -> dict:
        self.progress(texts.RPA_OPENING)
        draft = self.job.resume.get("draft")
        if draft and not self.guard.policy.allows(draft):  # never resumed off the portal
            raise self._off_portal(f"the saved draft is at {_path(draft)[:80]}")
        self._open(draft or expand_env(self.options.url))
        self.trace.draft(self.page.url, attempt=self.token)
        self.trace.note(f"attempt {self.token}")
        if self.job.remember is not None:  # on the job record, before anything is sent
            self.job.remember(self.trace.resume)
        submitted = False
        for page_no in range(self.options.max_pages):
            self._check_origin()
            done = self._result()
            if done is not None:
                return done
            if submitted:  # no number and no refusal: whether it was accepted is unknown
                self.trace.note("submitted: neither a result nor a refusal on the page")
                self.trace.shot(self.page, "unknown")
                raise ExecutorError(texts.RPA_NO_RESULT, retryable=False,
                                    resume=self.trace.resume)
            controls = perceive(self.page)
            if page_no == 0 and self.business.discover and not self.job.resume:
                self._check_discovered(controls)
            matched = match(self.business, controls, self.options.fields)
            self.matched.update(matched)
            fixed = _fixed(self.options)
            self._fill(controls, matched, fixed)
            if self._unplaced(controls, matched, fixed):
                return self._hand_over()
            self._check_origin()  # a value sent elsewhere as it was typed
            filled = self._filled_here(controls, fixed)
            if carry(self.page, self.options.attempt_field, self.token):
                self.trace.note(f"fencing token {self.token}")
            pressed = self._press()
            if pressed == "login":
                continue  # logged in again: the draft page is filled anew
            submitted = pressed == "submit"
            self._check_origin()
            if self.answered == STALE_POST:  # the site applied nothing: see where it is now
                self.trace.note(f"portal answered {STALE_POST}: the page was out of date")
                submitted = False
                continue
            after = perceive(self.page)
            if page_moved(controls, filled, self.put, after):
                self.trace.note("the page moved under the job (errors on "
                                + "、".join(c.name for c in after if c.error is not None)
                                + ", never filled here): perceived again")
                submitted = False
                continue
            if any(c.error is not None for c in after):
                self._refused(after)
        raise ExecutorError(texts.RPA_FORM_CHANGED, retryable=False, resume=self.trace.resume)

    # -- the browser agent, when the form cannot be matched ----------------------------

    def _unplaced(self, controls: list[Control], matched: dict[str, Control],
                  fixed: Mapping[str, Any]) -> bool:
        """Required controls left empty here that no value of the business fits:
        direct matching cannot finish this form (the agent may, or says what is missing)."""
        return any(c.required and not c.value and c.name not in fixed
                   and c not in matched.values() for c in controls)

    def _hand_over(self) -> dict:
        """Let the browser agent (perceive → decide → act → observe) finish the form,
        with the business's values and every label known for them."""
        from si_agent.agent import ActionRunner, Agent, DomPerception, Goal
        from si_agent.executor.rpa.form import synonyms

        self.trace.note("direct matching cannot place every value: the agent takes over")
        labels: dict[str, list[str]] = {}
        values: dict[str, str] = {}
        for f in self.business.fields:
            if self.values.get(f.key) is None:
                continue
            values[f.key] = str(self.values[f.key])
            labels[f.key] = [x for x in (self.options.fields.get(f.key), f.label) if x]
            labels[f.key] += list(synonyms().get(f.key, ()))
        for n, (label, value) in enumerate(self.options.fixed.items()):
            values[f"fixed_{n}"] = "true" if value is True else str(value)
            labels[f"fixed_{n}"] = [label]
        goal = Goal(task=texts.RPA_AGENT_TASK.format(name=self.business.name), values=values,
                    labels=labels, success=self.options.success)
        agent = Agent(DomPerception(), self.decider, max_steps=self.options.agent_steps,
                      runner=ActionRunner(self.options.action_timeout * 1000),
                      origins=self.guard.policy)
        result = agent.run(self.page, goal, trace_dir=self.trace.directory / "agent")
        self.trace.note(f"agent: {'done' if result.success else 'stopped'} after "
                        f"{len(result.steps)} steps")
        if result.off_portal:
            self.submitted = self.submitted or result.unknown
            raise self._off_portal(f"agent: {result.off_portal}")
        if result.success:
            self.trace.fields = [FieldStatus(label=self.business.field(k).label, key=k,
                                             status=FILLED) for k in values if not
                                 k.startswith("fixed_")]
            output: dict[str, Any] = dict(result.output)
            output["field_status"] = [f.model_dump(exclude={"value"}) for f in self.trace.fields]
            return output
        if result.unknown:  # something was submitted: never again, say it
            raise ExecutorError(texts.RPA_NO_RESULT, retryable=False, resume=self.trace.resume)
        failed = {k: v for k, v in result.failed.items() if not k.startswith("fixed_")}
        self.trace.fields = [FieldStatus(label=self.business.field(k).label, key=k,
                                         status=FAILED, reason=v) for k, v in failed.items()]
        self.trace.fields += [FieldStatus(label=m, key=None, status=UNFILLED)
                              for m in result.missing]
        if failed and not result.missing:
            raise ExecutorError(texts.RPA_FIELDS_FAILED, field_errors=failed, retryable=False,
                                resume=self.trace.resume)
        reason = "、".join(f"{m}{UNFILLED}" for m in result.missing) or result.message
        raise ExecutorError(texts.RPA_REFUSED.format(reason=reason), field_errors=failed,
                            retryable=False, resume=self.trace.resume)

    # -- discovery ----------------------------------------------------------------

    def discover_page(self) -> discover.DiscoveredForm:
        """The fields this page of the form asks for, cached for the business."""
        controls = perceive(self.page)
        found = discover.DiscoveredForm(
            url=expand_env(self.options.url), hash=discover.form_hash(controls),
            fields=discover.infer_fields(controls, _fixed(self.options)))
        discover.save(self.trace_dir_root, self.business.id, found)
        self.trace.note(f"discovered {len(found.fields)} fields")
        return found

    def _check_discovered(self, controls: list[Control]) -> None:
        """Discover again when the form no longer looks like the cached one."""
        cached = discover.load_cached(self.trace_dir_root, self.business.id)
        if cached is None or cached.hash != discover.form_hash(controls):
            self.trace.note("the form changed since it was discovered")
            self.discover_page()

    @property
    def trace_dir_root(self) -> Path:
        return self.trace.root

    # -- navigation ----------------------------------------------------------------

    def _open(self, url: str) -> None:
        self._check_time()
        response = self.page.goto(url)
        self.trace.note(f"open {_path(url)}")
        if response is not None and response.status == 404 and url == self.job.resume.get(
                "draft"):  # the portal dropped the draft: start a new one
            self.trace.note("the draft is gone: a new one")
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
            raise self._off_portal(f"the login form posts to {_path(target)[:80]}")
        form.locator('input:not([type="password"]):not([type="hidden"])').first.fill(user)
        form.locator('input[type="password"]').fill(password)
        with self.page.expect_navigation():
            button.click()
        self.trace.note("logged in")
        self._check_origin()
        if self._on_login_page():
            raise ExecutorError(texts.RPA_LOGIN_FAILED, retryable=False)

    def _press(self) -> str:
        """Press 下一步 if the page has it, else submit; "login" if the portal logged us out."""
        self._check_time()
        button = self.page.get_by_role("button", name=self.options.next)
        step = "next"
        if button.count() == 0:
            button = self.page.get_by_role("button", name=self.options.submit)
            step = "submit"
            self.progress(texts.RPA_SUBMITTING)
        if button.count() == 0:
            self.trace.note("no next or submit button")
            raise ExecutorError(texts.RPA_FORM_CHANGED, retryable=False, resume=self.trace.resume)
        target = origins.destination(button.first)
        if target is not None and not self.guard.policy.allows(target):
            raise self._off_portal(f"the {step} button posts to {_path(target)[:80]}")
        if step == "submit":
            self.page.wait_for_timeout(_SETTLE_MS)  # let the page's requests reach the guard
            self._check_origin()
        self.trace.shot(self.page, f"before-{step}")
        self.submitted = self.submitted or step == "submit"
        with self.page.expect_navigation() as navigation:
            button.first.click()
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

    # -- filling and reading -----------------------------------------------------------

    def _fill(self, controls: list[Control], matched: dict[str, Control],
              fixed: Mapping[str, str | bool]) -> None:
        total = len(matched)
        unfit: dict[str, str] = {}  # values no option of their control means
        for done, (key, control) in enumerate(matched.items(), start=1):
            self._check_time()
            self.progress(texts.RPA_FILLING.format(done=done, total=total))
            field = self.business.field(key)
            value = self.values.get(key)
            if value is None:
                continue
            if not self._set(control, str(value), field):
                unfit[key] = texts.RPA_NO_OPTION.format(
                    options="、".join(o.label for o in control.options))
                continue
            self.taken[key] = control
            self.trace.note(f"fill {control.name} = {mask(field.type, value)}")
        if unfit:  # refused before anything is sent: the citizen chooses again
            self.trace.fields = [FieldStatus(label=matched[k].name, key=k, status=FAILED,
                                             reason=r) for k, r in unfit.items()]
            raise ExecutorError(texts.RPA_FIELDS_FAILED, field_errors=unfit, retryable=False,
                                resume=self.trace.resume)
        for control in controls:
            if control.name in fixed:
                self._set(control, fixed[control.name], None)
                self.trace.note(f"fill {control.name} (fixed)")

    def _filled_here(self, controls: list[Control],
                     fixed: Mapping[str, str | bool]) -> set[str]:
        """Keys of the controls of this page that the job filled, their shown values
        remembered (to tell a refusal of them from a page that moved)."""
        keys = {c.key for c in controls}
        filled = {c.key for c in self.taken.values() if c.key in keys}
        filled |= {c.key for c in controls if c.name in fixed}
        self.put.update(shown_values(perceive(self.page), filled))
        return filled

    def _set(self, control: Control, value: str | bool, field: Any) -> bool:
        """Put ``value`` in the control; False when no option of it means the value."""
        target = self.page.locator(control.selector())
        if control.kind == "checkbox":
            target.set_checked(value is True or str(value).lower() in ("true", "1", "是"))
            return True
        if control.kind in ("select", "radio"):
            choice = choose(field, control, str(value))
            if choice is None:
                self.trace.note(f"no option of {control.name} fits")
                return False
            if control.kind == "select":
                target.select_option(choice.value)
            else:
                self.page.locator(f'{control.selector()}[value="{css(choice.value)}"]').check()
            return True
        target.fill(str(value))
        return True

    def _result(self) -> dict | None:
        """The result dict if the page shows the success pattern, else None."""
        self._check_origin()  # a number is read from the portal's own pages only
        found = re.search(self.options.success, self.page.inner_text("body"))
        if found is None:
            return None
        self.trace.note("success page")
        self.trace.shot(self.page, "success")
        self.trace.fields = [FieldStatus(label=c.name, key=k, status=FILLED,
                                         value=mask(self.business.field(k).type,
                                                    self.values.get(k, "")))
                             for k, c in self.taken.items()]
        result = {k: v for k, v in found.groupdict().items() if v is not None}
        result["field_status"] = [f.model_dump(exclude={"value"}) for f in self.trace.fields]
        return result

    def _refused(self, controls: list[Control]) -> None:
        """The form announced invalid controls: a per-field table, then the error."""
        self.trace.shot(self.page, "refused")
        key_of = {c.key: k for k, c in self.matched.items()}
        table = []
        for c in controls:
            key = key_of.get(c.key)
            if c.error is not None:
                status, reason = FAILED, c.error or texts.RPA_FIELDS_FAILED
            elif key in self.taken or c.value:
                status, reason = FILLED, ""
            elif c.required:
                status, reason = UNFILLED, ""
            else:
                continue
            table.append(FieldStatus(label=c.name, key=key, status=status,
                                     reason=reason))
        self.trace.fields = table
        field_errors = {f.key: f.reason for f in table if f.status == FAILED and f.key}
        others = [f for f in table if f.status != FILLED and not f.key]
        self.trace.note("refused: " + ", ".join(f"{f.label} {f.status}" for f in table
                                                 if f.status != FILLED))
        if others:  # nothing the citizen can correct (a control the business does not fill)
            reason = "；".join(f"{f.label}{('：' + f.reason) if f.reason else f.status}"
                              for f in others)
            raise ExecutorError(texts.RPA_REFUSED.format(reason=reason), retryable=False,
                                field_errors=field_errors, resume=self.trace.resume)
        raise ExecutorError(texts.RPA_FIELDS_FAILED, field_errors=field_errors,
                            retryable=False, resume=self.trace.resume)


def _policy(options: RpaOptions, trace: Trace) -> origins.OriginPolicy:
    """The job's origin policy; a configuration that expands to no policy stops it."""
    try:
        return options.policy()
    except ValueError as exc:
        trace.note(f"origin policy: {exc}")
        log.error("rpa: the origin policy cannot be built: %s", exc)
        raise ExecutorError(texts.MISCONFIGURED, retryable=False) from None


def _close_quietly(context: Any) -> None:
    """Close a browser context without letting a failure hide the job's outcome."""
    try:
        context.close()
    except Exception as exc:  # the browser is gone already
        log.warning("rpa: closing a browser context failed (%s)", type(exc).__name__)


def _fixed(options: RpaOptions) -> dict[str, str | bool]:
    """The controls the business always sets, by normalized label."""
    return {normalize(k): v for k, v in options.fixed.items()}


def _path(url: str) -> str:
    """A URL for the log without its query (which may carry personal data)."""
    return url.split("?", 1)[0]
