"""One run of one rpa form (``Job``): page after page, fill, press, read the result.

``run`` opens the form (or the saved draft), and on every page perceives the
controls, fills them, hands the form to the browser agent when direct matching
cannot place every value (a required control no value fits, or, before the
submit, a value given that no control on any page took: values for a later page
wait for its 下一步), carries the attempt's fencing token, presses, and reads the
result or the refusal; a page that moved under the job is perceived again.
Discovery (``discover_page``) reads the fields a page asks for. The job's other
concerns live in the classes it is built from (``guarded`` lists them).
"""

from __future__ import annotations

from pathlib import Path

from si_agent.config.envsubst import expand_env
from si_agent.errors import ExecutorError
from si_agent.executor import texts
from si_agent.executor.rpa import discover
from si_agent.executor.rpa.fencing import STALE_POST, carry, page_moved
from si_agent.executor.rpa.filling import Filling
from si_agent.executor.rpa.form import Control, fold, pair, perceive
from si_agent.executor.rpa.guarded import digest, url_path
from si_agent.executor.rpa.handover import HandOver
from si_agent.executor.rpa.options import RpaOptions


class Job(Filling, HandOver):
    """One run of one form."""

    def run(self) -> dict:
        self.progress(texts.RPA_OPENING)
        draft = self.job.resume.get("draft")
        if draft and not self.guard.policy.allows(draft):  # never resumed off the portal
            raise self._off_portal(f"the saved draft is at {url_path(draft)[:80]}")
        self._open(draft or expand_env(self.options.url))
        sent = self.job.resume.get("sent")  # what an earlier attempt submitted, if any
        self.trace.draft(self.page.url, attempt=self.token, **({"sent": sent} if sent else {}),
                         **({"placed": self.placed_before} if self.placed_before else {}))
        self.trace.note(f"attempt {self.token}")
        if self.job.remember is not None:  # on the job record, before anything is sent
            self.job.remember(self.trace.resume)
        submitted = False
        for page_no in range(self.options.max_pages):
            self._check_origin()
            done = self._result(sent_here=submitted)
            if done is not None:
                if not submitted and sent and sent != digest(self.values):
                    raise self._submitted_before(done)
                return done
            if submitted:  # no number and no refusal: whether it was accepted is unknown
                self.trace.note("submitted: neither a result nor a refusal on the page")
                self.trace.shot(self.page, "unknown")
                raise ExecutorError(texts.RPA_NO_RESULT, retryable=False, unknown=True,
                                    resume=self.trace.resume)
            controls = perceive(self.page, settle=True)
            if page_no == 0 and self.business.discover and not self.job.resume:
                self._check_discovered(controls)
            matched, how = pair(self.business, controls, self.options.fields)
            for line in how.notes([c.name for c in controls]):
                self.trace.note(line)
            self.matched.update(matched)
            fixed = fixed_controls(self.options)
            self._fill(controls, matched, fixed)
            step, button = self._button()
            left = self._left_out()
            self.trace.note(f"page {page_no + 1}: placed "
                            + (", ".join(k for k in matched if k in self.taken) or "nothing")
                            + (f"; in no control yet: {', '.join(left)}" if left else ""))
            if self._unplaced(controls, matched, fixed):
                return self._hand_over()
            if left and step == "submit" and button is not None:
                # Nothing is submitted with a value left out: the agent tries to place
                # them, and says which it could not.
                self.trace.note("before the submit, values are in no control: "
                                + ", ".join(left))
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

    # -- discovery ----------------------------------------------------------------

    def discover_page(self) -> discover.DiscoveredForm:
        """The fields this page of the form asks for, cached for the business."""
        controls = perceive(self.page, settle=True)
        found = discover.DiscoveredForm(
            url=expand_env(self.options.url), hash=discover.form_hash(controls),
            fields=discover.infer_fields(controls, fixed_controls(self.options)))
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


def fixed_controls(options: RpaOptions) -> dict[str, str | bool]:
    """The controls the business always sets, by folded label (``labels.fold``)."""
    return {fold(k): v for k, v in options.fixed.items()}
