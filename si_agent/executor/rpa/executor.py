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

This module holds ``RpaExecutor`` (browsers, contexts, traces, discovery's cache);
one run of a form is a ``Job`` (``job.py``), built from one class per concern:
``guarded.py`` (its state and the origin guard), ``navigation.py`` (pages, login,
pressing), ``filling.py`` (filling, reading the result or the refusal) and
``handover.py`` (the browser agent).
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import threading
import time
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel

from si_agent import origins
from si_agent.config.envsubst import expand_env
from si_agent.config.model import Business
from si_agent.config.settings import DEFAULT_HANDOFF
from si_agent.errors import ExecutorError, ModelUnavailable
from si_agent.executor import texts
from si_agent.executor.base import ExecutorBase, JobContext, Progress
from si_agent.executor.rpa import browsers, discover
from si_agent.executor.rpa.job import Job
from si_agent.executor.rpa.options import RpaOptions
from si_agent.executor.rpa.trace import Trace
from si_agent.requirements import Missing, browser_missing, unreachable

log = logging.getLogger(__name__)


class RpaExecutor(ExecutorBase):
    kind: ClassVar[str] = "rpa"
    Options: ClassVar[type[BaseModel]] = RpaOptions
    long_running: ClassVar[bool] = True
    resumable: ClassVar[bool] = True  # a draft already submitted is read, not submitted again
    takes_job: ClassVar[bool] = True
    discovers: ClassVar[bool] = True

    def __init__(self, trace_dir: Path, *, chromium: str = "/usr/bin/chromium",
                 retention_days: int = 7, headed: bool = False, decider: Any = None,
                 handoff_text: str = DEFAULT_HANDOFF) -> None:
        from si_agent.agent import FormPolicy

        self.trace_dir = trace_dir
        self.chromium = chromium
        self.retention_days = retention_days
        self.headed = headed
        self.decider = decider or FormPolicy()  # for the agent, when matching falls short
        self.handoff_text = handoff_text
        self._probed: dict[str | None, Missing | None] = {}  # portal origin -> start-up probe

    @classmethod
    def from_settings(cls, settings: Any) -> RpaExecutor:
        """With a model configured (SI_LLM_*), the agent decides with it; else offline."""
        decider = None
        if settings.llm_base_url:
            from si_agent.agent import ModelDecider

            decider = ModelDecider.from_settings(settings)
        return cls(settings.data_dir / "rpa", chromium=str(settings.rpa_chromium),
                   retention_days=settings.rpa_retention_days, decider=decider,
                   handoff_text=settings.handoff_text)

    def requirements(self, options: RpaOptions) -> list[Missing]:
        """What a job of these options lacks here (checked at start-up): Playwright and
        the browser (blocking), else whether the portal answers now (a warning only)."""
        missing = browser_missing(self.chromium)
        if options.login is not None:
            unset = [name for name in (options.login.user_env, options.login.password_env)
                     if not os.environ.get(name)]
            if unset:  # the portal would ask, and the job fail at its login page
                missing.append(Missing(
                    f"the portal's login needs {' and '.join(unset)}",
                    "set the portal account's user and password in those environment "
                    "variables (see docs/rpa.md)"))
        if missing:
            return missing
        url = expand_env(options.url)
        origin = origins.origin_of(url)
        if origin not in self._probed:
            self._probed[origin] = unreachable(url)
        probe = self._probed[origin]
        return [probe] if probe is not None else []

    def _check_browser(self, business: Business) -> None:
        """Refuse a job that cannot start here, for good (no retry can help)."""
        missing = browser_missing(self.chromium)
        if missing:
            log.error("rpa: %s cannot run here: %s", business.id,
                      "; ".join(str(m) for m in missing))
            raise ExecutorError(texts.RPA_UNAVAILABLE.format(handoff=self.handoff_text),
                                retryable=False, unknown=True)

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
        self._check_browser(business)
        trace = Trace(self.trace_dir / f"discover-{business.id}",
                      self.trace_dir / "drafts" / f"discover-{business.id}.json")
        policy = _policy(options, trace)
        context = self._browser().new_context(locale="zh-CN", service_workers="block")
        try:
            page = context.new_page()
            guard = origins.guard(context, policy)  # before the page's first request
            page.set_default_timeout(options.action_timeout * 1000)
            job = Job(business, {}, options, page, trace, None, JobContext(id="discover"),
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
        self._check_browser(business)
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
            work = Job(business, values, options, page, trace, progress, job, self.decider,
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
