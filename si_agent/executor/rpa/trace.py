"""A rpa job's trace: the action log, the per-field table and screenshots, under
``$SI_DATA_DIR/rpa/<job id>/`` (readable by the service user only), and the draft
kept for the job's idempotency key under ``drafts/``."""

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
    """A job's action log, per-field table and screenshots, readable by the owner only."""

    def __init__(self, directory: Path, draft_file: Path) -> None:
        if (directory / "actions.log").exists():  # a rerun of the job: keep the first
            attempt = 2
            while (directory / f"attempt-{attempt}").exists():
                attempt += 1
            directory = directory / f"attempt-{attempt}"
        self.directory = directory
        self.draft_file = draft_file
        self.actions: list[str] = []
        self.fields: list[FieldStatus] = []
        self.resume: dict[str, Any] = {}
        self._shots = 0
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        os.chmod(directory, 0o700)

    def draft(self, url: str) -> None:
        """The form's draft for this job: kept for the next submission of the flow."""
        self.resume = {"draft": url}
        self.draft_file.write_text(json.dumps(self.resume), "utf-8")

    def note(self, action: str) -> None:
        self.actions.append(f"{time.strftime('%H:%M:%S')} {action}")

    def shot(self, page: Any, what: str) -> None:
        self._shots += 1
        page.screenshot(path=str(self.directory / f"{self._shots:02d}-{what}.png"), full_page=True)

    def save(self) -> None:
        """Write the log and the table (best effort: a full disk must not hide the
        job's outcome)."""
        try:
            self._write()
        except OSError as exc:
            log.warning("rpa trace %s not written: %s", self.directory.name,
                        type(exc).__name__)

    def _write(self) -> None:
        (self.directory / "actions.log").write_text("\n".join(self.actions) + "\n", "utf-8")
        (self.directory / "fields.json").write_text(
            json.dumps([f.model_dump() for f in self.fields], ensure_ascii=False, indent=1),
            "utf-8")
