"""``/console/moderation``: the sensitive-word list, its hits, editing and its versions.

The page shows the list in use (the business folder's ``_moderation.yaml`` or the
packaged default): its categories with their action and where they apply, how often
the moderation masked, refused or flagged a text in the last days (from the audit
log: categories only, never the text), and the list's YAML in an editor. ``检查``
validates a text as ``si-agent validate`` does (``file:line`` errors) and saves
nothing; ``保存`` also writes it (``si_agent.moderation.live.WordListEditor``): every
worker of the machine uses it within seconds, the text is kept as a version that can
be restored, and the audit log records who saved which version.

Saving is for a single machine (the business folder is this machine's): with Redis
sessions (several machines) the list ships with the deployment's image, and the page
says so and only shows it.
"""

from __future__ import annotations

from collections import Counter
from datetime import timedelta

from flask import (
    abort,
    current_app,
    flash,
    get_flashed_messages,
    redirect,
    render_template,
    request,
    url_for,
)

from si_agent.audit import StaffAction
from si_agent.audit.model import utc_now
from si_agent.errors import StoreUnavailable
from si_agent.moderation import Moderation, WordListEditor
from si_agent.moderation.live import MAX_LIST_BYTES, InvalidList, ListChanged, digest
from si_agent.server.console.blueprint import bp, request_limit, signed_in, url_encoded
from si_agent.server.console.texts import (
    MODERATION_ACTIONS,
    MODERATION_CHANGED,
    MODERATION_SAVED,
    MODERATION_VALID,
)

COUNT_DAYS = 7  # the hits counted on the page
SCAN = 5000  # audit entries read for the counts (newest first)


def editor() -> WordListEditor | None:
    """The editor of this deployment's word list (None: no word list, or not this machine's)."""
    return current_app.config.get("SI_MODERATION_EDITOR")


def init_moderation_editor(app, settings, moderation: Moderation) -> None:
    """Give the console an editor when the list is this machine's to change."""
    live = moderation.word_list
    if live is not None and settings.session_store != "redis":
        app.config["SI_MODERATION_EDITOR"] = WordListEditor(
            live, settings.data_dir / "moderation" / "versions")


def _counts() -> tuple[Counter, bool]:
    """Moderation hits of the last ``COUNT_DAYS`` days by (where, action, category)."""
    audit = current_app.config["SI_CONTROLLER"].audit
    counts: Counter = Counter()
    try:
        entries = audit.query(since=utc_now() - timedelta(days=COUNT_DAYS), limit=SCAN)
    except StoreUnavailable:
        return counts, False
    for e in entries:
        if e.event != "moderation":
            continue
        where, _, categories = (e.detail or "").partition(": ")
        for category in categories.split(", "):
            counts[(where, e.outcome or "", category)] += 1
    return counts, True


def _page(*, content: str | None = None, based_on: str | None = None, errors=(),
          warnings=(), notice: str | None = None, notice_kind: str = "ok", status: int = 200):
    moderation: Moderation = current_app.config["SI_CONTROLLER"].moderation
    live = moderation.word_list
    edit = editor()
    path = text = None
    if live is not None:
        words = live.words
        path = words.path
        if edit is not None:
            _, text = edit.current()
        categories = Counter((e.category, e.action.value, tuple(e.where)) for e in words.entries)
        labels = words.labels or {}
    else:
        words, categories, labels = None, Counter(), {}
    counts, counted = _counts()
    current = text if text is not None else ""
    return render_template(
        "console/moderation.html",
        live=live,
        words=words,
        path=path,
        default=live is not None and path is not None and edit is not None
        and path != str(edit.path),
        categories=sorted(categories.items()),
        labels=labels,
        counts=sorted(counts.items(), key=lambda kv: -kv[1]),
        counted=counted,
        days=COUNT_DAYS,
        editable=edit is not None,
        content=current if content is None else content,
        based_on=based_on or digest(current),
        errors=errors,
        warnings=warnings,
        notice=notice,
        notice_kind=notice_kind,
        versions=edit.versions() if edit else [],
        actions=MODERATION_ACTIONS,
        max_chars=MAX_LIST_BYTES // 3,
    ), status


SAVED = "moderation-saved"
request_limit(["console.moderation_check", "console.moderation_save"],
              url_encoded(MAX_LIST_BYTES))


@bp.get("/moderation")
def moderation():
    # The version just saved, flashed in the signed session (a query parameter would let
    # a link show any text as a green notice).
    saved = next(iter(get_flashed_messages(category_filter=[SAVED])), None)
    return _page(notice=MODERATION_SAVED.format(version=saved) if saved else None)


def _posted() -> tuple[str, str]:
    content = request.form.get("content", "")
    if len(content.encode("utf-8")) > MAX_LIST_BYTES:
        abort(413)
    return content.replace("\r\n", "\n"), request.form.get("based_on", "")


@bp.post("/moderation/check")
def moderation_check():
    edit = editor()
    if edit is None:
        abort(404)
    content, based_on = _posted()
    _, errors, warnings = edit.live.validate(content)
    return _page(content=content, based_on=based_on, errors=errors, warnings=warnings,
                 notice=None if errors else MODERATION_VALID, status=400 if errors else 200)


@bp.post("/moderation")
def moderation_save():
    edit = editor()
    if edit is None:
        abort(404)
    content, based_on = _posted()
    return _save(edit, content, based_on, StaffAction.MODERATION_SAVED, note="")


@bp.get("/moderation/versions/<version_id>")
def moderation_version(version_id: str):
    edit = editor()
    version = edit.version(version_id) if edit else None
    if edit is None or version is None:
        abort(404)
    _, text = edit.current()
    return render_template("console/moderation_version.html", version=version,
                           based_on=digest(text), in_use=version.sha256 == digest(text))


@bp.post("/moderation/versions/<version_id>/restore")
def moderation_restore(version_id: str):
    edit = editor()
    version = edit.version(version_id) if edit else None
    if edit is None or version is None:
        abort(404)
    return _save(edit, version.content, request.form.get("based_on", ""),
                 StaffAction.MODERATION_RESTORED, note=f"恢复自版本 {version.id}")


def _save(edit: WordListEditor, content: str, based_on: str, action: StaffAction, note: str):
    staff = signed_in()
    audit = current_app.config["SI_CONTROLLER"].audit
    try:
        version, _ = edit.save(content, actor=staff.name, based_on=based_on, note=note)
    except InvalidList as exc:
        return _page(content=content, based_on=based_on, errors=exc.errors, status=400)
    except ListChanged:
        audit.staff(staff.name, action, target="_moderation.yaml", outcome="refused",
                    detail="the list changed since the page was loaded")
        return _page(content=content, notice=MODERATION_CHANGED, notice_kind="warn", status=409)
    audit.staff(staff.name, action, target="_moderation.yaml",
                detail=f"version {version.id}: {version.words} words"
                       + (f"; {note}" if note else ""))
    flash(version.id, SAVED)
    return redirect(url_for("console.moderation"), code=303)
