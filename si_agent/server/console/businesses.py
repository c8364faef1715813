"""``/console/businesses``: the business folder as staff see it: validation, YAML, a preview chat.

The list is every business of the folder with its file and whether the file passes
``si-agent validate`` (``si_agent.app.check_folder``: the same checks, ``file:line``
errors); problems outside business files (the assistant texts, the word list) are
listed too. One business's page shows its YAML with line numbers and its problems,
and a **preview chat**: a sandbox assistant built from the folder as it is (or with
this file as edited on the page): its own memory sessions, the rule engine, the
built-in demo backend, no knowledge base, nothing audited; it never touches the
running assistant or a citizen's session.

Saving a file from the browser is for a single machine (memory or SQLite sessions):
the whole folder with the new text must pass the checks; the file before it is kept
as a backup (``data/businesses_backup``) and the save is audited. The running
assistant keeps the businesses it started with until it is restarted (the page says
so); with several machines the businesses ship with the image and the page only shows.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import threading
from collections import OrderedDict
from datetime import datetime, timezone
from pathlib import Path

from flask import abort, current_app, redirect, render_template, request, url_for

from si_agent.app import FolderCheck, build_controller, check_folder
from si_agent.audit import StaffAction
from si_agent.config.settings import Settings
from si_agent.errors import ConfigErrors, SiAgentError
from si_agent.flow.controller import Controller
from si_agent.server.console import texts
from si_agent.server.console.blueprint import bp, request_limit, signed_in, url_encoded

MAX_FILE_BYTES = 200_000  # a business file saved or previewed from the console
SANDBOXES = 4  # preview assistants kept (each about 1 s to build)
PREVIEW_TURNS = 30  # turns of a preview shown


def _settings() -> Settings:
    return current_app.config["SI_SETTINGS"]


def _folder() -> Path:
    return Path(_settings().business_dir)


def _editable() -> bool:
    return _settings().session_store != "redis"


def _problems_by_file(found: FolderCheck) -> dict[str, list]:
    by_file: dict[str, list] = {}
    for problem in [*found.errors, *found.warnings]:
        by_file.setdefault(Path(problem.file).name, []).append(problem)
    return by_file


request_limit(["console.business_preview", "console.business_save"],
              url_encoded(MAX_FILE_BYTES))


@bp.get("/businesses")
def businesses():
    folder = _folder()
    found = check_folder(folder)
    problems = _problems_by_file(found)
    files = sorted(p.name for p in folder.glob("*.yaml") if not p.name.startswith("_"))
    by_file = {Path(b.source).name: b for b in found.catalog.values() if b.source}
    rows = [{"file": name, "business": by_file.get(name),
             "errors": [p for p in problems.get(name, []) if not _is_warning(p)],
             "warnings": [p for p in problems.get(name, []) if _is_warning(p)]}
            for name in files]
    others = {name: items for name, items in problems.items() if name not in files}
    return render_template("console/businesses.html", rows=rows, others=others, folder=folder,
                           found=found, editable=_editable())


def _is_warning(problem) -> bool:
    return type(problem).__name__ == "ConfigWarning"


def _file(name: str) -> Path:
    """The business file ``name`` of the folder (404 for anything else)."""
    folder = _folder()
    names = {p.name for p in folder.glob("*.yaml") if not p.name.startswith("_")}
    if name not in names:
        abort(404)
    return folder / name


@bp.get("/businesses/<name>")
def business_file(name: str):
    path = _file(name)
    saved = request.args.get("saved") == "1"
    return _file_page(path, path.read_text(encoding="utf-8"),
                      notice=texts.BUSINESS_SAVED if saved else None)


def _file_page(path: Path, content: str, *, found: FolderCheck | None = None,
               preview: list | None = None, notice: str | None = None,
               notice_kind: str = "ok", status: int = 200):
    if found is None:
        found = check_folder(path.parent)
    problems = _problems_by_file(found).get(path.name, [])
    on_disk = path.read_text(encoding="utf-8")
    return render_template(
        "console/business.html", path=path, name=path.name, content=content,
        lines=content.splitlines(), edited=content != on_disk,
        errors=[p for p in problems if not _is_warning(p)],
        warnings=[p for p in problems if _is_warning(p)],
        preview=preview or [], notice=notice, notice_kind=notice_kind, editable=_editable(),
        based_on=_digest(on_disk), max_chars=MAX_FILE_BYTES // 3,
    ), status


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _posted_content() -> str:
    content = request.form.get("content", "")
    if len(content.encode("utf-8")) > MAX_FILE_BYTES:
        abort(413)
    return content.replace("\r\n", "\n")


def _candidate(path: Path, content: str, into: Path) -> Path:
    """A copy of the folder with ``path`` replaced by ``content``, made in ``into``."""
    folder = into / "businesses"
    shutil.copytree(path.parent, folder, ignore=shutil.ignore_patterns(".*"))
    (folder / path.name).write_text(content, encoding="utf-8")
    return folder


def _check_candidate(path: Path, content: str) -> FolderCheck:
    """``check_folder`` on the folder with ``path`` as ``content``; problems name the
    folder's own files."""
    with tempfile.TemporaryDirectory(prefix="si-console-check-") as tmp:
        folder = _candidate(path, content, Path(tmp))
        found = check_folder(folder)
    return FolderCheck(found.catalog, found.texts, found.words,
                       [_relocated(e, folder, path.parent) for e in found.errors],
                       [_relocated(w, folder, path.parent) for w in found.warnings])


def _relocated(problem, old: Path, new: Path):
    file = Path(problem.file)
    if file.parent == old or file == old:
        return type(problem)(str(new / file.relative_to(old)), problem.line, problem.path,
                             problem.message)
    return problem


# -- the preview chat ----------------------------------------------------------------

class Sandboxes:
    """Preview assistants by folder content, the newest ``SANDBOXES`` kept."""

    def __init__(self) -> None:
        self._built: OrderedDict[str, tuple[Controller, tempfile.TemporaryDirectory]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, path: Path, content: str):
        """The controller for the folder with ``path`` as ``content``, or ``ConfigErrors``."""
        key = _digest(f"{path}\0{content}")
        with self._lock:
            if key in self._built:
                self._built.move_to_end(key)
                return self._built[key][0]
            tmp = tempfile.TemporaryDirectory(prefix="si-console-preview-")
            try:
                folder = _candidate(path, content, Path(tmp.name))
                settings = Settings(business_dir=folder, data_dir=Path(tmp.name) / "data",
                                    session_store="memory", audit_store="memory",
                                    engine="rules", knowledge="none", moderation="words",
                                    jwt_secret=_settings().jwt_secret)
                controller = build_controller(settings)
            except BaseException:
                tmp.cleanup()
                raise
            self._built[key] = (controller, tmp)
            while len(self._built) > SANDBOXES:
                _, (old, old_tmp) = self._built.popitem(last=False)
                old_tmp.cleanup()
            return controller


def _sandboxes() -> Sandboxes:
    return current_app.extensions.setdefault("si_console_sandboxes", Sandboxes())


@bp.post("/businesses/<name>/preview")
def business_preview(name: str):
    path = _file(name)
    content = _posted_content()
    message = (request.form.get("message") or "").strip()[:500]
    history = request.form.getlist("said")[-PREVIEW_TURNS:]
    preview: list[dict] = []
    found = _check_candidate(path, content)
    if found.errors:
        return _file_page(path, content, found=found, notice=texts.PREVIEW_INVALID,
                          notice_kind="err", status=400)
    try:
        controller = _sandboxes().get(path, content)
    except (ConfigErrors, SiAgentError) as exc:
        return _file_page(path, content, found=found, notice=texts.PREVIEW_FAILED.format(
            reason=str(exc).splitlines()[0]), notice_kind="err", status=400)
    # Each preview replays what was said on this page into a fresh sandbox session, so a
    # preview is exactly the dialogue shown (and the page holds no server-side state).
    session_id = f"console-preview-{os.urandom(8).hex()}"
    try:
        for said in [*history, message] if message else history:
            turn = controller.handle(session_id, said)
            preview.append({"said": said, "reply": turn.reply, "state": turn.state})
    finally:
        controller.store.delete(session_id)
    return _file_page(path, content, found=found, preview=preview)


# -- saving --------------------------------------------------------------------------

@bp.post("/businesses/<name>")
def business_save(name: str):
    path = _file(name)
    if not _editable():
        abort(404)
    content = _posted_content()
    staff = signed_in()
    found = _check_candidate(path, content)
    if found.errors:
        return _file_page(path, content, found=found, notice=texts.BUSINESS_INVALID,
                          notice_kind="err", status=400)
    before = path.read_text(encoding="utf-8")
    if _digest(before) != request.form.get("based_on"):
        return _file_page(path, content, found=found, notice=texts.BUSINESS_CHANGED,
                          notice_kind="warn", status=409)
    backups = _settings().data_dir / "businesses_backup"
    backups.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S-%f")
    backup = backups / f"{path.stem}.{stamp}.yaml"
    backup.write_text(before, encoding="utf-8")
    fd, tmp_name = tempfile.mkstemp(dir=path.parent, prefix=".console-", suffix=".yaml")
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(content)
    os.replace(tmp_name, path)
    current_app.config["SI_CONTROLLER"].audit.staff(
        staff.name, StaffAction.BUSINESS_SAVED, target=path.name, detail=f"backup {backup.name}")
    return redirect(url_for("console.business_file", name=name, saved=1), code=303)
