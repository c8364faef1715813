"""A demo government portal: web forms only, no API, for the RPA executor to fill.

Routes:

    GET      /                                   the list of businesses
    GET|POST /login, POST /logout                sign in (SI_PORTAL_USER / SI_PORTAL_PASSWORD,
                                                 default demo / demo123) and out
    GET      /forms/<business_id>[?v=2]          start a draft; redirects to the draft's URL;
                                                 ?variant=<seed>&inject=<field key>: a
                                                 generated variant of the form (``variants``)
    GET|POST /forms/<business_id>/drafts/<id>    show / post the draft's current page; once
                                                 submitted, the success page with its 受理编号
    GET      /_admin/applications                JSON, newest first (for tests)
    POST     /_admin/reset                       forget drafts, applications, faults
    POST     /_admin/expire_sessions             log everybody out
    POST     /_admin/fail_next                   {"count": n, "status": 500, "delay": s,
                                                 "after": false, "until_next_post": false}:
                                                 fault the next n form POSTs

Every ``/forms`` URL needs a login (otherwise a redirect to ``/login?next=…``).
A form POST that passes its checks redirects (303) back to the draft's URL; one
that fails re-renders the page with the values kept and each error tied to its
control. A draft is submitted at most once: posting it again shows the same
受理编号.

Fencing: every page carries the draft's revision (hidden ``_rev``, the page
token) and an empty hidden ``_attempt`` a robot may set to its attempt number
(fencing token). A POST whose page token is not the draft's current one, whose
attempt is older than one already posted, or whose conditional update loses to
another POST (a stale snapshot) changes nothing and answers 409 with the
draft's current page and a "this page is out of date" notice (or the success
page, if the draft was submitted meanwhile). A POST without the tokens (an old
client) is checked against the snapshot it was read from. Faults: ``status`` answers that status with an error page (before the
POST takes effect, or after it when ``after`` is true); ``delay`` waits first
(with ``until_next_post``, only until another POST of the same draft arrives,
which then waits for the held one to be applied first: a request the network
held until another client's, for races).
The ``/_admin`` routes have no login: the portal is a local test double.
"""

from __future__ import annotations

import hmac
import logging
import os
import secrets
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from flask import Flask, Response, abort, redirect, render_template, request, session, url_for
from werkzeug.exceptions import HTTPException

from si_agent.demo_portal import texts
from si_agent.demo_portal.checks import check_fields
from si_agent.demo_portal.forms import BUSINESSES, VERSIONS, Form, find_form
from si_agent.demo_portal.store import Draft, Fault, PortalStore
from si_agent.demo_portal.variants import form_for, with_injection

logger = logging.getLogger(__name__)

PAGE_TOKEN, ATTEMPT_TOKEN = "_rev", "_attempt"  # hidden inputs of every form page
DEFAULT_USER = "demo"
DEFAULT_PASSWORD = "demo123"


def create_portal_app(db_path: str | Path, *, version: int = 1, user: str | None = None,
                      password: str | None = None, secret: str | None = None) -> Flask:
    """The portal over the SQLite file ``db_path``.

    ``version`` is the form version a new draft gets when the URL asks for none
    (businesses without that version keep version 1). Credentials and the
    session secret default to SI_PORTAL_USER, SI_PORTAL_PASSWORD and
    SI_PORTAL_SECRET (a random secret per process when unset).
    """
    if version not in VERSIONS:
        raise ValueError(f"version must be one of {VERSIONS}, got {version!r}")
    app = Flask(__name__)
    app.secret_key = secret or os.environ.get("SI_PORTAL_SECRET") or secrets.token_hex(32)
    app.config["SESSION_COOKIE_NAME"] = "si_portal_session"
    store = PortalStore(db_path)
    login_user = user or os.environ.get("SI_PORTAL_USER") or DEFAULT_USER
    login_password = password or os.environ.get("SI_PORTAL_PASSWORD") or DEFAULT_PASSWORD
    app.jinja_env.trim_blocks = app.jinja_env.lstrip_blocks = True
    app.jinja_env.globals.update(texts=texts, businesses=BUSINESSES)

    def logged_in() -> bool:
        return bool(session.get("user")) and session.get("epoch") == store.login_epoch()

    def to_login() -> Response:
        target = request.full_path.rstrip("?")
        return redirect(url_for("login", next=target))

    @app.get("/")
    def index() -> str:
        return render_template("index.html", logged_in=logged_in())

    @app.route("/login", methods=["GET", "POST"])
    def login() -> Any:
        target = _safe_next(request.values.get("next"))
        failed = False
        if request.method == "POST":
            name = request.form.get("username", "")
            given = request.form.get("password", "")
            if (hmac.compare_digest(name.encode(), login_user.encode())
                    and hmac.compare_digest(given.encode(), login_password.encode())):
                session.clear()
                session.update(user=name, epoch=store.login_epoch())
                return redirect(target, code=303)
            failed = True
        return render_template("login.html", next=target, failed=failed,
                               username=request.form.get("username", ""),
                               asked=request.method == "GET" and "next" in request.args)

    @app.post("/logout")
    def logout() -> Response:
        session.clear()
        return redirect(url_for("index"), code=303)

    @app.get("/forms/<business_id>")
    def start(business_id: str) -> Response:
        if not logged_in():
            return to_login()
        asked = request.args.get("v")
        if asked is None:
            chosen = version if find_form(business_id, version) else 1
        else:
            chosen = int(asked) if asked.isdigit() else 0
        variant = request.args.get("variant")
        if variant is not None and not variant.isdigit():
            abort(404)
        seed = None if variant is None else int(variant)
        form = form_for(business_id, chosen, seed)
        inject = request.args.get("inject") or None
        if form is None or (inject and not any(f.key == inject for f in form.fields)):
            abort(404)
        draft_id = store.create_draft(business_id, chosen, variant=seed, inject=inject)
        return redirect(url_for("draft_page", business_id=business_id, draft_id=draft_id))

    @app.route("/forms/<business_id>/drafts/<draft_id>", methods=["GET", "POST"])
    def draft_page(business_id: str, draft_id: str) -> Any:
        if not logged_in():
            return to_login()
        draft = store.draft(draft_id)
        if draft is None or draft.business_id != business_id:
            abort(404)
        form = form_for(draft.business_id, draft.version, draft.variant)
        if request.method == "GET":
            if draft.application_no:
                return _success(form, draft.application_no)
            return _render_page(form, draft, draft.page, draft.raw, {})
        fault = store.take_fault()
        if fault and fault.until_next_post:
            return _held_until_next_post(store, form, draft, fault)
        draft = _after_held_posts(store, draft)
        if fault and fault.delay:
            time.sleep(fault.delay)
        if fault and fault.status and not fault.after:
            return _server_error(fault.status)
        response = _post(store, form, draft)
        if fault and fault.status:
            return _server_error(fault.status)
        return response

    @app.get("/_admin/applications")
    def admin_applications() -> Any:
        return app.json.response(store.applications())

    @app.post("/_admin/reset")
    def admin_reset() -> Any:
        store.reset()
        return {"ok": True}

    @app.post("/_admin/expire_sessions")
    def admin_expire_sessions() -> Any:
        store.expire_logins()
        return {"ok": True}

    @app.post("/_admin/fail_next")
    def admin_fail_next() -> Any:
        body = request.get_json(silent=True) or {}
        try:
            count = int(body.get("count", 1))
            status = None if body.get("status") is None else int(body["status"])
            delay = float(body.get("delay", 0))
        except (TypeError, ValueError):
            return {"error": "count, status and delay must be numbers"}, 400
        if count < 0 or delay < 0 or (status is not None and not 400 <= status <= 599):
            return {"error": "count >= 0, delay >= 0, status 400-599"}, 400
        if status is None and not delay and count:
            return {"error": "give a status, a delay or both"}, 400
        store.set_faults(count, status=status, delay=delay, after=bool(body.get("after")),
                         until_next_post=bool(body.get("until_next_post")))
        return {"ok": True}

    @app.errorhandler(HTTPException)
    def http_error(exc: HTTPException) -> Any:
        if exc.code == 404:
            return render_template("error.html", title=texts.NOT_FOUND, code=404), 404
        return exc

    @app.errorhandler(Exception)
    def crash(exc: Exception) -> Any:
        logger.exception("demo portal failed on %s %s", request.method, request.path)
        return _server_error(500)

    app.json.ensure_ascii = False
    return app


def _post(store: PortalStore, form: Form, draft: Draft) -> Any:
    """Apply a POST to the draft's current page: go back, go on, submit or show errors.

    Every write is conditional on the snapshot ``draft`` (and the posted tokens):
    a stale POST gets the out-of-date page instead."""
    if draft.application_no:
        return _success(form, draft.application_no)
    posted_rev = _token(request.form.get(PAGE_TOKEN))
    attempt = _token(request.form.get(ATTEMPT_TOKEN))
    if (posted_rev is not None and posted_rev != draft.rev) or (
            attempt is not None and attempt < draft.attempt):
        return _out_of_date(store, form, draft.draft_id)
    page = form.pages[draft.page]
    raw = {**draft.raw, **{f.id: request.form.get(f.id, "") for f in page.fields}}
    here = url_for("draft_page", business_id=draft.business_id, draft_id=draft.draft_id)
    if request.form.get("action") == "back" and draft.page > 0:
        if not store.save_draft(draft, page=draft.page - 1, raw=raw, attempt=attempt):
            return _out_of_date(store, form, draft.draft_id)
        return redirect(here, code=303)
    last = draft.page == len(form.pages) - 1
    # The last page checks every page: earlier pages were checked but may be stale.
    checked = form.fields if last else page.fields
    values, errors = check_fields(form, checked, raw)
    if draft.inject:
        refused = with_injection(form, draft.inject, checked, errors)
        if refused is not None and store.take_injection(draft.draft_id):
            errors = refused
    if errors:
        shown = next(i for i, p in enumerate(form.pages) if any(f.id in errors for f in p.fields))
        if not store.save_draft(draft, page=shown, raw=raw, attempt=attempt):
            return _out_of_date(store, form, draft.draft_id)
        return _render_page(form, replace(draft, rev=draft.rev + 1), shown, raw, errors)
    if not last:
        if not store.save_draft(draft, page=draft.page + 1, raw=raw, attempt=attempt):
            return _out_of_date(store, form, draft.draft_id)
        return redirect(here, code=303)
    if store.submit(draft, values, raw=raw, attempt=attempt) is None:
        return _out_of_date(store, form, draft.draft_id)
    return redirect(here, code=303)


HELD_POST_WAIT = 30.0  # longest a POST waits for a held one to be applied first


def _held_until_next_post(store: PortalStore, form: Form, draft: Draft, fault: Fault) -> Any:
    """A POST held until the draft's next POST arrives (at most the fault's delay),
    then applied from the snapshot it was read with, before that next one."""
    seen, _ = store.count_post(draft.draft_id, held=1)
    try:
        deadline = time.monotonic() + fault.delay
        while time.monotonic() < deadline and store.count_post(draft.draft_id)[0] == seen:
            time.sleep(0.05)
        response = _post(store, form, draft)
    finally:
        store.count_post(draft.draft_id, held=-1)
    return _server_error(fault.status) if fault.status else response


def _after_held_posts(store: PortalStore, draft: Draft) -> Draft:
    """The draft once every held POST of it was applied (read again if any was held)."""
    _, held = store.count_post(draft.draft_id, posts=1)
    if not held:
        return draft
    deadline = time.monotonic() + HELD_POST_WAIT
    while held and time.monotonic() < deadline:
        time.sleep(0.05)
        held = store.count_post(draft.draft_id)[1]
    return store.draft(draft.draft_id) or draft


def _out_of_date(store: PortalStore, form: Form, draft_id: str) -> Any:
    """409 with the draft as it is now (a stale POST changed nothing)."""
    current = store.draft(draft_id)
    if current is None:
        abort(404)
    logger.info("draft %s: a stale POST refused (page token or attempt out of date)", draft_id)
    if current.application_no:
        return _success(form, current.application_no)
    return _render_page(form, current, current.page, current.raw, {},
                        notice=texts.PAGE_OUT_OF_DATE), 409


def _token(value: str | None) -> int | None:
    """A posted page token or attempt number; None when absent or not a number."""
    return int(value) if value and value.isdigit() and len(value) <= 18 else None


def _render_page(form: Form, draft: Draft, index: int, raw: dict[str, str],
                 errors: dict[str, str], *, notice: str | None = None) -> str:
    page = form.pages[index]
    shown = {f.id: errors[f.id] for f in page.fields if f.id in errors}
    return render_template("form.html", form=form, page=page, index=index, raw=raw,
                           errors=shown, labels={f.id: f.label for f in page.fields},
                           notice=notice, tokens={PAGE_TOKEN: draft.rev, ATTEMPT_TOKEN: ""})


def _success(form: Form, application_no: str) -> str:
    return render_template("success.html", form=form, application_no=application_no)


def _server_error(status: int) -> tuple[str, int]:
    return render_template("error.html", title=texts.SERVER_ERROR, code=status), status


def _safe_next(target: str | None) -> str:
    """A local path to return to after login; anything else goes home."""
    if target and target.startswith("/") and not target.startswith("//") and "\\" not in target:
        return target
    return "/"
