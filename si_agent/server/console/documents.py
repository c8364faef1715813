"""Knowledge documents: ``/console/documents`` (upload, preview, publish, replace, delete).

Staff upload a PDF, Word (.docx), Excel (.xlsx), HTML or Markdown file with its title,
source, as-of date and the businesses it concerns. The file is converted at once
(``rag.formats``: a file that is not what its name says, encrypted, scanned, broken or
too big is refused with the reason, and nothing is stored) and kept, with its converted
text, as a draft version (``rag.library``). Its page shows the text and the chunks the
knowledge base would index; **发布** indexes that document's chunks only
(``KnowledgeBase.publish``: the built-in corpus is not embedded again) and from then on
citizens' answers cite it. A new file for a document is its next version (a draft until
published; the one before stays, superseded, and can be published again); deleting a
document takes it out of the index first, then removes every version and original.

Routes (all on the console's blueprint: signed in as staff or admin, CSRF on POST):

    GET  /console/documents                      the list, and the upload form
    POST /console/documents                      upload a new document → its draft
    GET  /console/documents/<doc_id>?version=N   one document: versions, text, chunks
    GET  /console/documents/<doc_id>/original?version=N   the original file (download)
    POST /console/documents/<doc_id>/replace     upload its next version
    POST /console/documents/<doc_id>/publish     version=N: index it (the one before: superseded)
    POST /console/documents/<doc_id>/discard     version=N: drop a draft
    POST /console/documents/<doc_id>/delete      confirm=yes: unindex and remove the document

Every change, and every refused upload, is audited (``StaffAction.DOCUMENT_*``). The
size limit (``SI_KB_UPLOAD_MAX_BYTES``) is the request's ``max_content_length`` for the
two upload routes, set before the CSRF check reads the form: a larger request is
refused from its Content-Length (or when its stream passes the limit), never read whole.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from typing import Protocol, runtime_checkable

from flask import (
    current_app,
    flash,
    get_flashed_messages,
    redirect,
    render_template,
    request,
    send_file,
    url_for,
)
from werkzeug.exceptions import RequestEntityTooLarge

from rag.chunking import Chunk, chunk_document
from rag.documents import Document
from rag.errors import DocumentError, KnowledgeUnavailable, MissingDependency
from rag.formats import FileRefused, Limits, convert
from rag.formats.sniff import human_size
from rag.knowledge_base import PublishReport
from rag.library import Library, Meta, Record, Version
from si_agent.audit import AuditLog, StaffAction
from si_agent.knowledge import behind
from si_agent.server.console import texts
from si_agent.server.console.blueprint import (
    FORM_OVERHEAD,
    bp,
    request_limit,
    signed_in,
    too_large,
)

log = logging.getLogger(__name__)

TITLE_MAX = 200
SOURCE_MAX = 500
UPLOAD_ENDPOINTS = frozenset({"console.documents", "console.document_replace"})
_AS_OF = re.compile(r"^\d{4}-(0[1-9]|1[0-2])(-(0[1-9]|[12]\d|3[01]))?$")
_DOC_ID = re.compile(r"^doc-[0-9a-f]{8}$")
_LIBRARY_LOCK = threading.Lock()


@runtime_checkable
class PublishingKnowledge(Protocol):
    """A knowledge channel that indexes uploaded documents (``rag.KnowledgeBase``)."""

    library: Library | None

    def publish(self, doc: Document) -> PublishReport: ...

    def withdraw(self, doc_id: str) -> None: ...


class DocumentMissing(LookupError):
    """No such document or version (404)."""


class FormError(ValueError):
    """A metadata field staff must correct (the message says which, in Chinese)."""


request_limit(UPLOAD_ENDPOINTS, lambda: _limits().max_bytes + FORM_OVERHEAD)


@too_large(UPLOAD_ENDPOINTS)
def _too_large(err: RequestEntityTooLarge):
    message = FileRefused("too_large", size=human_size(_limits().max_bytes)).message
    _audit_refused("too_large")
    return _list_page(error=message, status=413)


@bp.errorhandler(DocumentMissing)
def _missing(err):
    return render_template("console/error.html", message=texts.DOC_NOT_FOUND, status=404), 404


# -- pages --------------------------------------------------------------------------


@bp.route("/documents", methods=["GET", "POST"])
def documents():
    if request.method == "GET":
        return _list_page(notice=_flashed())
    try:
        meta, data, filename = _upload()
        converted = convert(data, filename, _limits())
        meta = _with_title(meta, converted.title, filename)
        version = _library().add(data, filename, converted.format, converted.text,
                                 converted.pages, meta, signed_in().name)
    except FileRefused as exc:
        _audit_refused(exc.code)
        return _list_page(error=exc.message, form=request.form, status=_status(exc))
    except (FormError, DocumentError) as exc:
        return _list_page(error=_form_message(exc), form=request.form, status=400)
    except MissingDependency as exc:
        log.warning("cannot convert an upload: %s", exc)
        return _list_page(error=texts.DOC_MISSING_LIBRARY, form=request.form, status=503)
    _audit(StaffAction.DOCUMENT_UPLOADED, version)
    return _to(version, texts.DOC_UPLOADED.format(version=version.version))


@bp.get("/documents/<doc_id>")
def document(doc_id: str):
    record = _record(doc_id)
    number = request.args.get("version", type=int)
    shown = next((v for v in record.versions if v.version == number), None)
    if shown is None:
        shown = record.draft or record.live or record.latest
    return _document_page(record, shown, notice=_flashed())


@bp.get("/documents/<doc_id>/original")
def document_original(doc_id: str):
    version = _version(doc_id, request.args.get("version", type=int))
    path = _library().original_path(version)
    if not path.is_file():
        raise DocumentMissing(doc_id)
    return send_file(path, mimetype="application/octet-stream", as_attachment=True,
                     download_name=version.filename, max_age=0)


@bp.post("/documents/<doc_id>/replace")
def document_replace(doc_id: str):
    record = _record(doc_id)
    current = record.latest
    try:
        meta, data, filename = _upload()
        converted = convert(data, filename, _limits())
        version = _library().add(data, filename, converted.format, converted.text,
                                 converted.pages, meta, signed_in().name, doc_id=doc_id)
    except FileRefused as exc:
        _audit_refused(exc.code, doc_id)
        return _document_page(record, current, error=exc.message, status=_status(exc))
    except (FormError, DocumentError) as exc:
        return _document_page(record, current, error=_form_message(exc), status=400)
    except MissingDependency as exc:
        log.warning("cannot convert an upload: %s", exc)
        return _document_page(record, current, error=texts.DOC_MISSING_LIBRARY, status=503)
    _audit(StaffAction.DOCUMENT_UPLOADED, version)
    return _to(version, texts.DOC_UPLOADED.format(version=version.version))


@bp.post("/documents/<doc_id>/publish")
def document_publish(doc_id: str):
    record = _record(doc_id)
    version = _version(doc_id, request.form.get("version", type=int))
    if version.state == "published":
        return _document_page(record, version, error=texts.DOC_VERSION_NOT_DRAFT, status=409)
    knowledge = _knowledge()
    if knowledge is None:
        return _document_page(record, version, error=_no_knowledge(), status=503)
    try:
        report = knowledge.publish(version.document())
    except KnowledgeUnavailable as exc:
        log.warning("publishing %s v%d failed: %s", doc_id, version.version, exc)
        return _document_page(record, version, status=503,
                              error=texts.DOC_INDEX_FAILED.format(detail=exc.reason))
    except DocumentError:  # its id is a built-in document's (never by chance: 8 hex digits)
        return _document_page(record, version, error=texts.DOC_CLASHES, status=409)
    _library().mark_published(doc_id, version.version, signed_in().name)
    _audit(StaffAction.DOCUMENT_PUBLISHED, version,
           extra=f"{report.chunks} chunks, {report.seconds:.1f} s")
    return _to(version, texts.DOC_PUBLISHED.format(version=version.version, chunks=report.chunks,
                                                   seconds=report.seconds))


@bp.post("/documents/<doc_id>/discard")
def document_discard(doc_id: str):
    record = _record(doc_id)
    version = _version(doc_id, request.form.get("version", type=int))
    if version.state != "draft":
        return _document_page(record, version, error=texts.DOC_VERSION_NOT_DRAFT, status=409)
    _library().discard(doc_id, version.version)
    _audit(StaffAction.DOCUMENT_DISCARDED, version)
    notice = texts.DOC_DISCARDED.format(version=version.version)
    if _library().record(doc_id) is None:  # its only version
        flash(notice, NOTICE)
        return redirect(url_for("console.documents"), code=303)
    flash(notice, NOTICE)
    return redirect(url_for("console.document", doc_id=doc_id), code=303)


@bp.post("/documents/<doc_id>/delete")
def document_delete(doc_id: str):
    record = _record(doc_id)
    if request.form.get("confirm") != "yes":
        return _document_page(record, record.live or record.latest, status=400,
                              error=texts.DOC_DELETE_UNCONFIRMED)
    knowledge = _knowledge()
    if record.live is not None or any(v.state == "superseded" for v in record.versions):
        if knowledge is None:
            return _document_page(record, record.latest, error=_no_knowledge(), status=503)
        try:
            knowledge.withdraw(doc_id)
        except KnowledgeUnavailable as exc:
            return _document_page(record, record.latest, status=503,
                                  error=texts.DOC_INDEX_FAILED.format(detail=exc.reason))
    _library().delete(doc_id)
    shown = record.live or record.latest
    _audit(StaffAction.DOCUMENT_DELETED, shown, extra=f"{len(record.versions)} versions")
    flash(texts.DOC_DELETED.format(title=shown.meta.title), NOTICE)
    return redirect(url_for("console.documents"), code=303)


@bp.app_template_filter("doc_time")
def _doc_time(seconds: float) -> str:
    """A time stamp as staff read it (the server's local time)."""
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(seconds))


# -- helpers ------------------------------------------------------------------------


def _upload() -> tuple[Meta, bytes, str]:
    """The form's metadata and file; ``FormError`` or ``FileRefused``."""
    part = request.files.get("file")
    if part is None or not part.filename:
        raise FormError(texts.DOC_NO_FILE)
    limits = _limits()
    data = part.stream.read(limits.max_bytes + 1)  # spooled to disk by Werkzeug, read once
    if len(data) > limits.max_bytes:
        raise FileRefused("too_large", size=human_size(limits.max_bytes))
    return _meta(), data, part.filename


def _meta() -> Meta:
    form = request.form
    title = " ".join(form.get("title", "").split())
    source = " ".join(form.get("source", "").split())
    as_of = form.get("as_of", "").strip()
    if len(title) > TITLE_MAX:
        raise FormError(texts.DOC_TITLE_TOO_LONG.format(limit=TITLE_MAX))
    if not source:
        raise FormError(texts.DOC_SOURCE_NEEDED)
    if len(source) > SOURCE_MAX:
        raise FormError(texts.DOC_SOURCE_TOO_LONG.format(limit=SOURCE_MAX))
    if not _AS_OF.match(as_of):
        raise FormError(texts.DOC_AS_OF_BAD)
    chosen = tuple(dict.fromkeys(b for b in form.getlist("businesses") if b))
    catalog = current_app.config["SI_CONTROLLER"].catalog
    unknown = [b for b in chosen if b not in catalog]
    if unknown:
        raise FormError(texts.DOC_BUSINESS_UNKNOWN.format(ids="、".join(unknown)[:200]))
    return Meta(title, source, as_of, chosen)


def _with_title(meta: Meta, found: str, filename: str) -> Meta:
    """Staff's title, else the file's own (its first heading, its metadata)."""
    if meta.title:
        return meta
    title = " ".join(found.split())[:TITLE_MAX]
    if not title:
        raise FormError(texts.DOC_TITLE_NEEDED)
    return Meta(title, meta.source, meta.as_of, meta.businesses)


def _form_message(exc: Exception) -> str:
    if isinstance(exc, DocumentError):  # as_document's checks: the body or the title
        return texts.DOC_TITLE_NEEDED if "title" in exc.message else \
            FileRefused("no_text").message
    return str(exc)


def _status(exc: FileRefused) -> int:
    return 413 if exc.code == "too_large" else 415 if exc.code in {
        "unsupported_type", "type_mismatch", "foreign_file", "binary_file"} else 422


def _limits() -> Limits:
    return Limits(max_bytes=current_app.config["SI_SETTINGS"].kb_upload_max_bytes)


def _library() -> Library:
    knowledge = _knowledge()
    if knowledge is not None and knowledge.library is not None:
        return knowledge.library
    with _LIBRARY_LOCK:
        library = current_app.extensions.get("si_documents")
        if library is None:  # no knowledge base: uploads can be previewed, not published
            settings = current_app.config["SI_SETTINGS"]
            library = current_app.extensions["si_documents"] = Library(settings.documents_dir)
    return library


def _knowledge() -> PublishingKnowledge | None:
    # The knowledge base itself, behind the curated answers that stand in front of it.
    knowledge = behind(current_app.config["SI_CONTROLLER"].knowledge)
    if isinstance(knowledge, PublishingKnowledge) and knowledge.library is not None:
        return knowledge
    return None


def _no_knowledge() -> str:
    status = current_app.config["SI_CONTROLLER"].knowledge.status()
    return texts.DOC_NO_KNOWLEDGE.format(detail=status.get("detail", ""))


def _record(doc_id: str) -> Record:
    record = _library().record(doc_id) if _DOC_ID.match(doc_id) else None
    if record is None:
        raise DocumentMissing(doc_id)
    return record


def _version(doc_id: str, number: int | None) -> Version:
    version = _library().version(doc_id, number) if number and _DOC_ID.match(doc_id) else None
    if version is None:
        raise DocumentMissing(doc_id)
    return version


def _to(version: Version, notice: str):
    flash(notice, NOTICE)
    return redirect(url_for("console.document", doc_id=version.doc_id, version=version.version),
                    code=303)


# What a change did, shown once on the page it leads to: a flashed message in the
# signed session, never a query parameter (a link could put any text in a green notice).
NOTICE = "notice"


def _flashed() -> str | None:
    return next(iter(get_flashed_messages(category_filter=[NOTICE])), None)


def _chunks(version: Version) -> list[Chunk]:
    try:
        return chunk_document(version.document())
    except DocumentError:
        return []


def _list_page(*, notice: str | None = None, error: str | None = None, form=None,
               status: int = 200):
    catalog = current_app.config["SI_CONTROLLER"].catalog
    return render_template(
        "console/documents.html",
        records=_library().records(),
        businesses=sorted(((b.id, b.name) for b in catalog.values()), key=lambda b: b[0]),
        names={b.id: b.name for b in catalog.values()},
        form=form or {},
        chosen=set(form.getlist("businesses")) if form is not None else set(),
        this_month=time.strftime("%Y-%m"),
        max_size=human_size(_limits().max_bytes),
        publishable=_knowledge() is not None,
        notice=_short(notice),
        error=error,
    ), status


def _document_page(record: Record, shown: Version, *, notice: str | None = None,
                   error: str | None = None, status: int = 200):
    catalog = current_app.config["SI_CONTROLLER"].catalog
    return render_template(
        "console/document.html",
        record=record,
        shown=shown,
        chunks=_chunks(shown),
        businesses=sorted(((b.id, b.name) for b in catalog.values()), key=lambda b: b[0]),
        names={b.id: b.name for b in catalog.values()},
        this_month=time.strftime("%Y-%m"),
        max_size=human_size(_limits().max_bytes),
        publishable=_knowledge() is not None,
        notice=_short(notice),
        error=error,
    ), status


def _short(notice: str | None) -> str | None:
    return notice[:300] if notice else None


def _audit(action: StaffAction, version: Version, *, extra: str = "") -> None:
    detail = f"《{version.meta.title}》 v{version.version} ({version.format}, {version.size} B)"
    _audit_log().staff(signed_in().name, action, target=version.doc_id,
                       detail=f"{detail}{'; ' + extra if extra else ''}")


def _audit_refused(code: str, doc_id: str | None = None) -> None:
    part = request.files.get("file") if request.content_length is not None and \
        request.content_length <= _limits().max_bytes + FORM_OVERHEAD else None
    name = part.filename[:100] if part is not None and part.filename else "?"
    _audit_log().staff(signed_in().name, StaffAction.DOCUMENT_UPLOADED, target=doc_id,
                       outcome="refused", detail=f"{code}: {name}")


def _audit_log() -> AuditLog:
    return current_app.config["SI_CONTROLLER"].audit


