"""Fixtures for the business config tests: a writable copy of ``businesses/``."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from si_agent.config.loader import check_directory

REPO_BUSINESSES = Path(__file__).resolve().parents[2] / "businesses"


class BusinessCopy:
    """A copy of the real business files that a test corrupts with string edits."""

    def __init__(self, directory: Path) -> None:
        self.dir = directory

    def edit(self, file: str, old: str, new: str) -> None:
        """Replace the one occurrence of ``old`` in ``file`` by ``new``."""
        path = self.dir / file
        text = path.read_text("utf-8")
        assert text.count(old) == 1, f"{old!r} occurs {text.count(old)} times in {file}"
        path.write_text(text.replace(old, new), "utf-8")

    def errors(self) -> list[str]:
        """Every problem as ``file:line: path: message``, with paths relative to the copy."""
        _, errors = check_directory(self.dir)
        return [str(e).replace(f"{self.dir}/", "") for e in errors]


@pytest.fixture
def copy(tmp_path: Path) -> BusinessCopy:
    target = tmp_path / "businesses"
    target.mkdir()
    for path in REPO_BUSINESSES.glob("*.yaml"):
        shutil.copy(path, target / path.name)
    return BusinessCopy(target)
