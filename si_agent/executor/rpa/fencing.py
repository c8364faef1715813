"""Attempts of one rpa job that must not trip over each other: the fencing token a
form post carries, and telling "the page moved under me" from a refusal.

A job taken over after its worker died runs again while the dead worker's last
request may still be held by the portal. Two defences, both here:

- **Fencing token.** Each attempt posts its number in the hidden input named by
  ``api.options.attempt_field`` (where the site has one, as the demo portal's
  ``_attempt``); the site refuses a post of an older attempt. The number is the
  job's attempt, and above any number an earlier run on the same draft used
  (kept in the resume state), so a later job on the same draft is newer too.
- **Page moved.** After a press the page may show errors that are not about what
  this job sent: the portal applied a late request first and answered for
  another page. ``page_moved`` says so when every error sits on a control this
  press did not fill and that does not show a value this job put in, on a page
  other than the one pressed; the job then perceives the page again and carries
  on, instead of reporting the citizen's values as refused.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from si_agent.executor.base import JobContext
from si_agent.executor.rpa.form import Control, css

log = logging.getLogger(__name__)

STALE_POST = 409  # a site's answer to a post that changed nothing because the page was stale

_SET_HIDDEN = "(el, value) => { el.value = value; }"


def fencing_token(job: JobContext) -> int:
    """This attempt's number: the job's attempt, above any a run on the same draft used."""
    earlier = job.resume.get("attempt") if job.resume else None
    earlier = earlier if isinstance(earlier, int) and not isinstance(earlier, bool) else 0
    return max(job.attempt, earlier + 1)


def carry(page: Any, field: str | None, token: int) -> bool:
    """Put ``token`` in the form's hidden input ``field``; False when the page has none."""
    if not field:
        return False
    target = page.locator(f'form input[type="hidden"][name="{css(field)}"]')
    if target.count() == 0:
        return False
    target.first.evaluate(_SET_HIDDEN, str(token))
    return True


def page_moved(pressed: Sequence[Control], filled: Collection[str],
               put: Mapping[str, str], after: Sequence[Control]) -> bool:
    """True when the errors ``after`` a press are not a refusal of what was sent.

    ``pressed``: the controls of the page that was pressed; ``filled``: the keys of
    those this press filled; ``put``: every value this job put in, by control key,
    as the page showed it. Any error on a control filled here, or on one still
    showing this job's value, is a refusal; so is an error on the very page pressed
    (something this job cannot fill). Otherwise the page moved.
    """
    errors = [c for c in after if c.error is not None]
    if not errors:
        return False
    for c in errors:
        if c.key in filled or (c.value and put.get(c.key) == c.value):
            return False
    return [c.key for c in after] != [c.key for c in pressed]


def shown_values(controls: Sequence[Control], keys: Collection[str]) -> dict[str, str]:
    """The values the page shows in the controls ``keys`` (after this job filled them)."""
    return {c.key: c.value for c in controls if c.key in keys and c.value}
