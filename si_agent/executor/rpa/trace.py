"""A rpa job's trace: the action log, the per-field table and screenshots, under
``$SI_DATA_DIR/rpa/<job id>/`` (readable by the service user only), one folder
per attempt (a job taken over after a crash writes ``<job id>/attempt-<n>/``),
and the draft kept for the job's idempotency key under ``drafts/``.

Everything is written as it happens (each action appended and flushed, the table
rewritten when it changes), so a worker killed mid-job leaves its trace too.
"""

from __future__ import annotations

import json
import logging
import os
import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel

log = logging.getLogger(__name__)

FILLED, FAILED, UNFILLED = "填写成功", "填写失败", "未填写"


class FieldStatus(BaseModel):
    """One control's outcome, in the terms a citizen and staff read."""

    label: str
    key: str | None  # the business field it took, if any
    status: str  # FILLED, FAILED or UNFILLED
    reason: str = ""
    value: str = ""  # masked


class Trace:
    """A job's action log, per-field table and screenshots, readable by the owner only.

    ``attempt`` (the job's attempt number) names the folder: the first attempt
    writes into ``directory``, attempt n into ``directory/attempt-<n>``; a folder
    already used (a job run again by hand) moves on to the next free number.
    """

    def __init__(self, directory: Path, draft_file: Path, *, attempt: int = 1) -> None:
        self.root = directory.parent  # the executor's trace folder (drafts/, forms/)
        self.directory = _attempt_folder(directory, attempt)
        self.draft_file = draft_file
        self.actions: list[str] = []
        self._fields: list[FieldStatus] = []
        self.resume: dict[str, Any] = {}
        self._shots = 0
        self._written = True
        self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        os.chmod(self.directory, 0o700)
        if self.directory != directory:
            os.chmod(directory, 0o700)

    def draft(self, url: str, **state: Any) -> None:
        """The form's draft for this job (and ``state`` the next attempt needs, e.g.
        the fencing token used): kept for the flow's next submission."""
        self.resume = {"draft": url, **state}
        self.draft_file.write_text(json.dumps(self.resume), "utf-8")

    def note(self, action: str) -> None:
        """Log an action, appended to ``actions.log`` at once."""
        line = f"{time.strftime('%H:%M:%S')} {action}"
        self.actions.append(line)
        self._guarded(self._append, line)

    @property
    def fields(self) -> list[FieldStatus]:
        return self._fields

    @fields.setter
    def fields(self, table: list[FieldStatus]) -> None:
        """The per-field table, written to ``fields.json`` at once."""
        self._fields = table
        self._guarded(self._write_fields)

    def shot(self, page: Any, what: str) -> None:
        self._shots += 1
        page.screenshot(path=str(self.directory / f"{self._shots:02d}-{what}.png"), full_page=True)

    def save(self) -> None:
        """Write the log and the table as they are now (both were written as they
        changed; this catches up after a write that failed)."""
        if not self._written:
            self._guarded(self._rewrite)

    def _guarded(self, write: Any, *args: Any) -> None:
        """Best effort: a full disk must not hide the job's outcome."""
        try:
            write(*args)
        except OSError as exc:
            self._written = False
            log.warning("rpa trace %s not written: %s", self.directory.name,
                        type(exc).__name__)

    def _append(self, line: str) -> None:
        with open(self.directory / "actions.log", "a", encoding="utf-8") as out:
            out.write(line + "\n")

    def _write_fields(self) -> None:
        (self.directory / "fields.json").write_text(
            json.dumps([f.model_dump() for f in self._fields], ensure_ascii=False, indent=1),
            "utf-8")

    def _rewrite(self) -> None:
        self._written = True
        (self.directory / "actions.log").write_text("\n".join(self.actions) + "\n", "utf-8")
        self._write_fields()


def _attempt_folder(directory: Path, attempt: int) -> Path:
    """The folder of this attempt: the job's own for the first, ``attempt-<n>`` after."""
    def used(path: Path) -> bool:
        return (path / "actions.log").exists() or (path / "fields.json").exists()

    candidate = directory if attempt <= 1 else directory / f"attempt-{attempt}"
    n = max(attempt, 1)
    while used(candidate):
        n += 1
        candidate = directory / f"attempt-{n}"
    return candidate
