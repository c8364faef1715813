"""Filling the form and reading what it says (``Filling``): the matched controls and
the ``fixed`` ones are filled, then the page gives the result (the success pattern)
or refuses values, as per-field statuses and an ``ExecutorError`` whose
``field_errors`` send the dialogue back to collect just those fields (see
``guarded`` for how the parts of a job fit).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from typing import Any

from si_agent.errors import ExecutorError
from si_agent.executor import texts
from si_agent.executor.rpa.fencing import shown_values
from si_agent.executor.rpa.form import Control, choose, css, perceive
from si_agent.executor.rpa.navigation import Navigation
from si_agent.executor.rpa.trace import FAILED, FILLED, UNFILLED, FieldStatus
from si_agent.form_values import as_list, typed
from si_agent.labels import repeats
from si_agent.validators import mask

log = logging.getLogger(__name__)

_YES = ("true", "1", "是", "yes", "y", "on")
_KIND_WORDS = {"date": "日期", "dateparts": "日期", "time": "时间", "month": "年月", "datetime-local": "日期时间",
               "number": "数字", "range": "数字"}


class Filling(Navigation):
    """A job that fills the controls of a page and reads the page's answer."""

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
            if not self._set(control, value, field):
                unfit[key] = texts.RPA_NO_OPTION.format(
                    options="、".join(o.label for o in control.options)) if control.options \
                    else texts.RPA_NOT_TYPED.format(kind=_KIND_WORDS.get(
                        control.input_type, control.input_type))
                continue
            self.taken[key] = control
            self.trace.note(f"fill {control.name} = {mask(field.type, value)}")
        if unfit:  # refused before anything is sent: the citizen chooses again
            self.trace.fields = self._table((UNFILLED, texts.RPA_NOT_REACHED),
                                            {k: (FAILED, r) for k, r in unfit.items()})
            raise ExecutorError(texts.RPA_FIELDS_FAILED, field_errors=unfit, retryable=False,
                                resume=self.trace.resume)
        for control in controls:
            if control.folded in fixed:
                self._set(control, fixed[control.folded], None)
                self.trace.note(f"fill {control.name} (fixed)")
        self._fill_repeats(controls, fixed)

    def _fill_repeats(self, controls: list[Control], fixed: Mapping[str, str | bool]) -> None:
        """A control asking again for a value filled here ("Confirm email address")
        takes the same value (``labels.repeats``)."""
        index = {c.key: i for i, c in enumerate(controls)}
        taken = {index[c.key]: k for k, c in self.taken.items() if c.key in index}
        for i, key in repeats([c.label for c in controls], taken).items():
            control = controls[i]
            if control.folded in fixed or control.options:
                continue
            if self._set(control, self.values[key], self.business.field(key)):
                self.repeated[control.key] = key
                self.trace.note(f"fill {control.name} = the value of {key} (asked again)")

    def _filled_here(self, controls: list[Control],
                     fixed: Mapping[str, str | bool]) -> set[str]:
        """Keys of the controls of this page that the job filled, their shown values
        remembered (to tell a refusal of them from a page that moved)."""
        keys = {c.key for c in controls}
        filled = {c.key for c in self.taken.values() if c.key in keys}
        filled |= {c.key for c in controls if c.folded in fixed or c.key in self.repeated}
        self.put.update(shown_values(perceive(self.page), filled))
        return filled

    def _set(self, control: Control, value: Any, field: Any) -> bool:
        """Put ``value`` in the control, as its type takes it (``form_values.typed``);
        False when no option of it means the value, or the value is none of its type."""
        if control.kind == "dateparts":
            day = typed("date", str(value))
            if day is None:
                self.trace.note(f"the value is no date for {control.name}")
                return False
            year, month, date = (int(x) for x in day.split("-"))
            for key, part in zip(control.parts, (date, month, year), strict=True):
                self.page.locator(control.selector(key)).fill(str(part))
            return True
        target = self.page.locator(control.selector())
        if control.kind == "checkbox":
            target.set_checked(value is True or str(value).lower() in _YES)
            return True
        if control.kind == "checkboxes" or control.multiple:
            chosen = [choose(field, control, item) for item in as_list(value)]
            if not chosen or None in chosen:
                self.trace.note(f"no option of {control.name} fits")
                return False
            wanted = {c.value for c in chosen if c is not None}
            if control.multiple:
                target.select_option(sorted(wanted))
                return True
            for option in control.options:
                self.page.locator(f'{control.selector()}[value="{css(option.value)}"]'
                                  ).set_checked(option.value in wanted)
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
        text = typed(control.input_type, str(value), control.hint)
        if text is None:
            self.trace.note(f"the value is no {control.input_type} for {control.name}")
            return False
        target.fill(text)
        return True

    def _result(self, *, sent_here: bool) -> dict | None:
        """The result dict if the page shows the success pattern, else None; its
        ``field_status`` lists every value given (``sent_here``: this job submitted
        the form, else an earlier attempt did, with these values)."""
        self._check_origin()  # a number is read from the portal's own pages only
        found = re.search(self.options.success, self.page.inner_text("body"))
        if found is None:
            return None
        self.trace.note("success page")
        self.trace.shot(self.page, "success")
        self.trace.fields = self._table((UNFILLED, texts.RPA_NO_PLACE) if sent_here
                                        else (FILLED, ""))
        result = {k: v for k, v in found.groupdict().items() if v is not None}
        result["field_status"] = [f.model_dump(exclude={"value"}) for f in self.trace.fields]
        return result

    def _submitted_before(self, result: dict) -> ExecutorError:
        """The draft shows a number for an application made earlier with other values:
        not this submission's success (the portal holds the old values)."""
        number = next((str(v) for k, v in result.items() if k != "field_status"), "")
        self.trace.note("the draft was submitted before with other values: not reported "
                        "as this submission")
        log.warning("rpa job %s for %s: the resumed draft was submitted earlier with other "
                    "values", self.job.id, self.business.id)
        return ExecutorError(texts.RPA_SUBMITTED_BEFORE.format(number=number), retryable=False,
                             unknown=True, resume=self.trace.resume)

    def _refused(self, controls: list[Control]) -> None:
        """The form announced invalid controls: a per-field table, then the error."""
        self.trace.shot(self.page, "refused")
        key_of = {c.key: k for k, c in self.matched.items()} | self.repeated
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
        listed = {f.key for f in table if f.key}
        self.trace.fields = table + [f for f in self._table((UNFILLED, texts.RPA_NOT_REACHED))
                                     if f.key not in listed]
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
