"""Curated answers: ``/console/curated`` (the list with hit counts), add, edit, enable or
disable, delete, and import a 常见问题 spreadsheet (.xlsx or .csv).

Every change goes through ``si_agent.curated.CuratedBook`` (one question, one answer;
businesses that exist) and is audited (``StaffAction.CURATED_*``: who, which answer,
its question). An import is checked whole first: a file with any bad row (reported by
its row number) changes nothing. The answers are the controller's knowledge channel's
(``si_agent.curated.CuratedKnowledge``), so a change is seen by the next question, on
every machine sharing the store.
"""

from __future__ import annotations

import time

from flask import abort, current_app, redirect, render_template, request, url_for
from pydantic import ValidationError
from werkzeug.datastructures import MultiDict
from werkzeug.exceptions import RequestEntityTooLarge

from si_agent.audit import AuditLog, StaffAction
from si_agent.curated import CuratedBook, CuratedKnowledge, Draft
from si_agent.curated import texts as curated_texts
from si_agent.curated.knowledge import source_line
from si_agent.curated.model import MAX_ANSWER, MAX_QUESTION
from si_agent.curated.sheet import MAX_BYTES, SheetError, edit_reason, import_errors, read_sheet
from si_agent.server.console import texts
from si_agent.server.console.blueprint import (
    FORM_OVERHEAD,
    bp,
    request_limit,
    signed_in,
    too_large,
)

# A form at its limits (4,000 characters of answer, 50 paraphrases of 200), URL-encoded.
FORM_BYTES = 512 * 1024
request_limit(["console.curated_import"], MAX_BYTES + FORM_OVERHEAD)
request_limit(["console.curated_new", "console.curated_edit"], FORM_BYTES)


@too_large(["console.curated_import"])
def _too_large(err: RequestEntityTooLarge):
    return _import_failed([curated_texts.TOO_LARGE.format(limit=MAX_BYTES // (1024 * 1024))],
                          status=413)


def _book() -> CuratedBook:
    knowledge = current_app.config["SI_CONTROLLER"].knowledge
    if not isinstance(knowledge, CuratedKnowledge):  # a controller assembled without them
        abort(404)
    return knowledge.book


def _audit(action: StaffAction, target: str, detail: str | None = None) -> None:
    audit: AuditLog = current_app.config["SI_CONTROLLER"].audit
    audit.staff(signed_in().name, action, target=target, detail=detail)


def _catalog() -> dict:
    return current_app.config["SI_CONTROLLER"].catalog


@bp.get("/curated")
def curated():
    return render_template("console/curated.html", answers=_book().all(),
                           names={b.id: b.name for b in _catalog().values()},
                           source_line=source_line, max_mb=MAX_BYTES // (1024 * 1024),
                           done=_done())


@bp.route("/curated/new", methods=["GET", "POST"])
def curated_new():
    if request.method == "GET":  # prefilled from a reviewed turn (the conversation page)
        return _form(None, _prefill())
    try:
        answer = _book().add(_draft(), signed_in().name)
    except ValueError as exc:  # ValidationError, DuplicateQuestion, UnknownBusiness
        return _form(None, request.form, error=_reason(exc)), 400
    _audit(StaffAction.CURATED_ADDED, answer.id, answer.question)
    return redirect(url_for("console.curated", done="added"), code=303)


@bp.route("/curated/<answer_id>", methods=["GET", "POST"])
def curated_edit(answer_id: str):
    book = _book()
    old = book.get(answer_id) or abort(404)
    if request.method == "GET":
        return _form(old, {})
    try:
        new = book.update(old, _draft(), signed_in().name)
    except ValueError as exc:
        return _form(old, request.form, error=_reason(exc)), 400
    _audit(StaffAction.CURATED_UPDATED, new.id, new.question)
    return redirect(url_for("console.curated", done="saved"), code=303)


@bp.post("/curated/<answer_id>/enabled")
def curated_enabled(answer_id: str):
    book = _book()
    old = book.get(answer_id) or abort(404)
    enabled = request.form.get("enabled") == "1"
    try:
        new = book.set_enabled(old, enabled, signed_in().name)
    except ValueError:  # enabling one whose question another answer has taken since
        return redirect(url_for("console.curated", done="taken"), code=303)
    _audit(StaffAction.CURATED_ENABLED if enabled else StaffAction.CURATED_DISABLED,
           new.id, new.question)
    return redirect(url_for("console.curated",
                            done="enabled" if enabled else "disabled"),
                    code=303)


@bp.post("/curated/<answer_id>/delete")
def curated_delete(answer_id: str):
    book = _book()
    old = book.get(answer_id) or abort(404)
    book.delete(old)
    _audit(StaffAction.CURATED_DELETED, old.id, old.question)
    return redirect(url_for("console.curated", done="deleted"), code=303)


@bp.post("/curated/import")
def curated_import():
    upload = request.files.get("file")
    if upload is None or not upload.filename:
        return _import_failed([texts.CURATED_NO_FILE])
    data = upload.stream.read(MAX_BYTES + 1)
    names = {}
    for b in _catalog().values():
        names[b.id] = names[b.name] = b.id
    try:
        rows = read_sheet(data, upload.filename, names)
    except SheetError as exc:
        return _import_failed(exc.reasons)
    book = _book()
    existing = {a.id for a in book.all()}
    plan = book.plan_import([r.draft for r in rows], signed_in().name)
    if plan.errors:
        return _import_failed(import_errors(plan.errors, rows, existing))
    book.run_import(plan)
    _audit(StaffAction.CURATED_IMPORTED, upload.filename[:100],
           f"{len(plan.added)} added, {len(plan.updated)} updated")
    return redirect(url_for("console.curated", done="imported", added=len(plan.added),
                            updated=len(plan.updated)), code=303)


def _done() -> str | None:
    """What the change just made says (a key in the address, never its text)."""
    key = request.args.get("done", "")
    if key == "imported":
        return texts.CURATED_IMPORTED.format(added=request.args.get("added", type=int) or 0,
                                             updated=request.args.get("updated", type=int) or 0)
    return texts.CURATED_DONE.get(key)


def _import_failed(reasons: list[str], status: int = 400):
    return render_template("console/curated.html", answers=_book().all(),
                           names={b.id: b.name for b in _catalog().values()},
                           source_line=source_line, max_mb=MAX_BYTES // (1024 * 1024),
                           import_errors=reasons), status


def _draft() -> Draft:
    form = request.form
    paraphrases = [p for p in form.get("paraphrases", "").splitlines() if p.strip()]
    return Draft(question=form.get("question", ""), answer=form.get("answer", ""),
                 source=form.get("source", ""), as_of=form.get("as_of", ""),
                 paraphrases=paraphrases, businesses=form.getlist("businesses"),
                 enabled=form.get("enabled", "1") == "1")


def _prefill() -> dict:
    """A new answer's question, answer and businesses from the link of a reviewed turn
    (``?question=…&answer=…&businesses=…``): only filled into the form, to check and
    save; the source says where it came from. Nothing is saved by the GET."""
    args = request.args
    if not args.get("question"):
        return {}
    businesses = [b for b in args.getlist("businesses") if b in _catalog()]
    return MultiDict([("question", args.get("question", "")[:MAX_QUESTION]),
                      ("answer", args.get("answer", "")[:MAX_ANSWER]),
                      ("source", curated_texts.FROM_REVIEW), ("as_of", time.strftime("%Y-%m")),
                      *(("businesses", b) for b in businesses)])


def _form(answer, form, error: str | None = None):
    values = dict(answer.model_dump()) if answer else {"enabled": True, "businesses": []}
    if form:
        values.update(question=form.get("question", ""), answer=form.get("answer", ""),
                      source=form.get("source", ""), as_of=form.get("as_of", ""),
                      paraphrases=form.get("paraphrases", "").splitlines(),
                      businesses=form.getlist("businesses"))
    history = _book().store.history(answer.id) if answer else []
    return render_template("console/curated_form.html", answer=answer, values=values,
                           error=error, history=history,
                           businesses=sorted(_catalog().values(), key=lambda b: b.id))


def _reason(exc: ValueError) -> str:
    said = edit_reason(exc)
    if said is not None:
        return said
    if isinstance(exc, ValidationError):
        field = str(exc.errors()[0]["loc"][0]) if exc.errors() else ""
        return texts.CURATED_FIELDS.get(field, texts.CURATED_INVALID)
    return texts.CURATED_INVALID
