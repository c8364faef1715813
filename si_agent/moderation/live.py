"""The word list as staff edit it in the console: reloaded by every process, versioned.

``LiveWordList`` is the moderator a deployment runs (``create_moderation``): it applies
the business folder's list (``_moderation.yaml``, else the packaged default) and looks
at the file again at most every ``recheck`` seconds, so a list saved from the console
(or by hand) is used by every worker of the machine within seconds, without a restart.
A changed file with errors is not used: the list before it stays, and the log says why.

``WordListEditor`` saves a new list from the console: it validates it exactly as
``si-agent validate`` does (``file:line`` errors name the folder's file), refuses a
save based on a list that changed meanwhile (two staff editing at once; saves are
serialised across the machine's processes by a file lock), writes the file atomically and keeps every saved text as a version (``data/moderation/versions``)
that can be looked at and restored. The auditing is the caller's (it knows who).
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import logging
import os
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from si_agent.errors import ConfigError, ConfigErrors, ConfigWarning
from si_agent.moderation.model import Verdict, Where
from si_agent.moderation.words import (
    MODERATION_FILE,
    WordList,
    WordListModerator,
    catalog_phrases,
    check_moderation,
    collision_errors,
    list_path,
    load_word_list,
    single_character_warnings,
)

log = logging.getLogger(__name__)

RECHECK_SECONDS = 2.0  # how often a process looks at the list's file again
MAX_LIST_BYTES = 2_000_000  # a list saved from the console (10,000 words take ~200 KB)


def _stamp(path: Path) -> tuple[str, int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return str(path), st.st_mtime_ns, st.st_size


class LiveWordList:
    """The folder's word list, applied and reloaded when its file changes (module docstring)."""

    name = "words"

    def __init__(self, directory: str | Path, catalog: Mapping[str, Any] | None = None,
                 texts: Any = None, *, recheck: float = RECHECK_SECONDS,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.directory = Path(directory)
        self.catalog = catalog or {}
        self.texts = texts
        self._recheck, self._clock = recheck, clock
        self._lock = threading.Lock()
        path = list_path(self.directory)
        self._stamp = _stamp(path)
        words, errors, _ = check_moderation(self.directory, self.catalog, texts)
        if errors or words is None:
            raise ConfigErrors(errors)
        self._current = WordListModerator(words)
        self._due = clock() + recheck

    @property
    def words(self) -> WordList:
        """The list in use."""
        self._refresh()
        return self._current.words

    def check(self, text: str, where: Where) -> Verdict:
        self._refresh()
        return self._current.check(text, where)

    def hold(self, text: str, start: int) -> int:
        return self._current.hold(text, start)

    def refresh(self) -> None:
        """Look at the file now (after a save in this process)."""
        self._due = 0.0
        self._refresh()

    def _refresh(self) -> None:
        if self._clock() < self._due or not self._lock.acquire(blocking=False):
            return  # not due, or another thread is looking: it swaps the list for all
        try:
            self._due = self._clock() + self._recheck
            path = list_path(self.directory)
            stamp = _stamp(path)
            if stamp == self._stamp:
                return
            self._stamp = stamp
            words, errors, _ = check_moderation(self.directory, self.catalog, self.texts)
            if errors or words is None:
                log.error("moderation: %s changed but has %d error(s); the list before it "
                          "stays in use. First: %s", path, len(errors), errors[0] if errors
                          else "unreadable")
                return
            self._current = WordListModerator(words)
            log.info("moderation: reloaded %d words from %s", len(words.entries), path)
        except Exception:  # a moderator never raises (model.Moderator)
            log.exception("moderation: reloading the word list failed; the list before "
                          "it stays in use")
        finally:
            self._lock.release()

    def validate(self, content: str) -> tuple[WordList | None, list[ConfigError],
                                               list[ConfigWarning]]:
        """What ``si-agent validate`` would say of ``content`` as the folder's list; the
        errors and warnings name the folder's ``_moderation.yaml``."""
        target = str(self.directory / MODERATION_FILE)
        with tempfile.TemporaryDirectory(prefix="si-moderation-") as tmp:
            candidate = Path(tmp) / MODERATION_FILE
            candidate.write_text(content, encoding="utf-8")
            words, errors = load_word_list(candidate)
            warnings: list[ConfigWarning] = []
            if words is not None:
                errors = collision_errors(words, catalog_phrases(self.catalog, self.texts))
                warnings = single_character_warnings(words)
                words = WordList(entries=words.entries, allow=words.allow, path=target,
                                 labels=words.labels)
        return (words, [_renamed(e, str(candidate), target) for e in errors],
                [_renamed(w, str(candidate), target) for w in warnings])


def _renamed(problem: Any, old: str, new: str) -> Any:
    if problem.file == old:
        return type(problem)(new, problem.line, problem.path, problem.message)
    return problem


def digest(content: str) -> str:
    return hashlib.sha256(content.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Version:
    """One saved list: when, by whom, its text and what it holds."""

    id: str
    at: datetime
    actor: str
    sha256: str
    words: int
    content: str
    note: str = ""


class ListChanged(Exception):
    """The list changed since the editor's page was loaded (someone else saved)."""


class InvalidList(Exception):
    """The new list has errors (``errors``); nothing was saved."""

    def __init__(self, errors: list[ConfigError]) -> None:
        super().__init__(f"{len(errors)} error(s)")
        self.errors = errors


class WordListEditor:
    """Saves the folder's list from the console and keeps its versions (module docstring)."""

    def __init__(self, live: LiveWordList, versions_dir: str | Path) -> None:
        self.live = live
        self.versions_dir = Path(versions_dir)

    @contextmanager
    def _locked(self) -> Iterator[None]:
        """One save at a time on this machine, across threads and worker processes."""
        self.versions_dir.mkdir(parents=True, exist_ok=True)
        with open(self.versions_dir / ".lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    @property
    def path(self) -> Path:
        """The file the console writes: the business folder's ``_moderation.yaml``."""
        return self.live.directory / MODERATION_FILE

    def current(self) -> tuple[Path, str]:
        """The file in use (the folder's, else the packaged default) and its text."""
        path = list_path(self.live.directory)
        return path, path.read_text(encoding="utf-8")

    def save(self, content: str, *, actor: str, based_on: str,
             note: str = "") -> tuple[Version, list[ConfigWarning]]:
        """Write ``content`` as the folder's list (``InvalidList``, ``ListChanged``)."""
        content = content.replace("\r\n", "\n")
        words, errors, warnings = self.live.validate(content)
        if errors or words is None:
            raise InvalidList(errors)
        with self._locked():
            _, before = self.current()
            if digest(before) != based_on:
                raise ListChanged()
            if not self.versions():  # the first save keeps what was there, to go back to
                self._keep(before, actor="-", note="控制台首次保存前的词表")
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".moderation-",
                                       suffix=".yaml")
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as out:
                    out.write(content)
                os.replace(tmp, self.path)
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
            version = self._keep(content, actor=actor, note=note, words=len(words.entries))
        self.live.refresh()
        return version, warnings

    def versions(self) -> list[Version]:
        """Every saved version, newest first."""
        found = []
        for file in sorted(self.versions_dir.glob("*.json"), reverse=True):
            try:
                data = json.loads(file.read_text(encoding="utf-8"))
                found.append(Version(id=file.stem, at=datetime.fromisoformat(data["at"]),
                                     actor=data["actor"], sha256=data["sha256"],
                                     words=data["words"], content=data["content"],
                                     note=data.get("note", "")))
            except (OSError, ValueError, KeyError, TypeError):
                log.warning("moderation: unreadable version file %s skipped", file)
        return found

    def version(self, version_id: str) -> Version | None:
        return next((v for v in self.versions() if v.id == version_id), None)

    def _keep(self, content: str, *, actor: str, note: str, words: int | None = None) -> Version:
        at = datetime.now(timezone.utc)
        if words is None:
            parsed, _, _ = self.live.validate(content)
            words = len(parsed.entries) if parsed else 0
        self.versions_dir.mkdir(parents=True, exist_ok=True)
        sha = digest(content)
        record = {"at": at.isoformat(), "actor": actor, "sha256": sha, "words": words,
                  "content": content, "note": note}
        # A sequence number (saves are serialised by _locked) and the text's digest; no
        # long digit run: the audit log, which names the version, would mask it.
        version_id = f"{len(list(self.versions_dir.glob('*.json'))) + 1:05d}-{sha[:8]}"
        (self.versions_dir / f"{version_id}.json").write_text(
            json.dumps(record, ensure_ascii=False), encoding="utf-8")
        return Version(id=version_id, at=at, actor=actor, sha256=sha,
                       words=words, content=content, note=note)
