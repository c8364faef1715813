"""One rpa job's state and the origin guard glue (``GuardedJob``), the base of ``Job``.

A job (``si_agent.executor.rpa.job.Job``) is one run of one form. Its parts are
split by concern, each a class adding methods to the one before:

    GuardedJob     (this module)    the job's state; ``guarded``, ``_off_portal`` and
                                    ``_check_origin``: the page stays on the portal
    Navigation     navigation.py    opening pages, logging in, pressing 下一步/submit,
                                    the portal's status and the job's deadline
    Filling        filling.py       filling the matched controls, reading the result
                                    or the form's refusal
    HandOver       handover.py      the browser agent, when direct matching cannot
                                    place every value
    Job            job.py           ``run`` (page after page) and discovery

The origin policy itself is ``si_agent.origins``.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from collections.abc import Mapping
from typing import Any

from si_agent import origins
from si_agent.config.model import Business
from si_agent.errors import ExecutorError
from si_agent.executor import texts
from si_agent.executor.base import JobContext, Progress
from si_agent.executor.rpa.fencing import fencing_token
from si_agent.executor.rpa.form import Control
from si_agent.executor.rpa.options import RpaOptions
from si_agent.executor.rpa.trace import FILLED, FieldStatus, Trace
from si_agent.validators import mask

log = logging.getLogger(__name__)


class GuardedJob:
    """One run of one form: its state, and the guard that keeps its page on the portal."""

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
        self.repeated: dict[str, str] = {}  # control key -> the key whose value it repeats
        self.token = fencing_token(job)  # this attempt's number, posted where the site fences
        self.put: dict[str, str] = {}  # control key -> the value this job left in it
        self.answered: int | None = None  # the HTTP status of the last press
        # Values an earlier attempt placed in the resumed draft (key -> the value's
        # fingerprint): placed still, on pages this attempt may not see, unless changed.
        before = job.resume.get("placed")
        self.placed_before: dict[str, str] = dict(before) if isinstance(before, dict) else {}

    # -- every value placed or said (nothing left out silently) -------------------------

    def _given(self) -> list[str]:
        """Keys of the business's fields this job has a value for: each must go into a
        control of the form, or be reported as not filled."""
        return [f.key for f in self.business.fields
                if self.values.get(f.key) is not None and str(self.values[f.key]) != ""]

    def _placed(self, key: str) -> bool:
        """A control took the value of ``key``: in this attempt, or (the same value) in
        an earlier one on the resumed draft."""
        return key in self.taken or self.placed_before.get(key) == digest(
            {key: self.values.get(key)})

    def _left_out(self) -> list[str]:
        """The values given that no control took yet, on any page so far."""
        return [k for k in self._given() if not self._placed(k)]

    def _placed_state(self) -> dict[str, str]:
        """The values the draft holds, by key: their fingerprints (see ``placed_before``)."""
        return {k: digest({k: self.values[k]}) for k in self._given() if self._placed(k)}

    def _table(self, untaken: tuple[str, str],
               marked: Mapping[str, tuple[str, str]] | None = None) -> list[FieldStatus]:
        """One row per value given: ``marked`` (key -> status, reason) first, then
        填写成功 for those a control took, and ``untaken`` (status, reason) for the rest."""
        rows = []
        for key in self._given():
            field = self.business.field(key)
            control = self.matched.get(key)
            status, reason = (marked or {}).get(key) or (
                (FILLED, "") if self._placed(key) else untaken)
            rows.append(FieldStatus(
                label=control.name if control is not None else field.label, key=key,
                status=status, reason=reason,
                value=mask(field.type, self.values[key]) if status == FILLED else ""))
        return rows

    # -- the origin policy (si_agent.origins) ------------------------------------------

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
        return ExecutorError(message, retryable=False, unknown=self.submitted,
                             resume=self.trace.resume or None)

    def _check_origin(self) -> None:
        """Raise unless the page is on the portal and nothing tried to leave it."""
        if self.guard.fatal:
            raise self._off_portal(self.guard.fatal[0].describe())
        if not self.guard.policy.allows(self.page.url):
            raise self._off_portal(f"the page is at {url_path(self.page.url)[:80]}")


def url_path(url: str) -> str:
    """A URL for the log without its query (which may carry personal data)."""
    return url.split("?", 1)[0]


def digest(values: Mapping[str, Any]) -> str:
    """A short fingerprint of the values a draft was submitted with (kept with the
    draft, so a later attempt can tell a change from a plain retry)."""
    text = json.dumps({k: str(v) for k, v in sorted(values.items())}, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
