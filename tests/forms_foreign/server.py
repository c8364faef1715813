"""A small site serving the foreign-form suite's pages and recording what they post.

    app = create_app(load_forms())
    with serving(app) as base:   # http://127.0.0.1:<port>
        ...

Routes:

- ``GET /f/<form>?run=<tag>`` starts an application (a submission id) and redirects to
  its first page ``/f/<form>/<sid>/1``;
- ``GET/POST /f/<form>/<sid>/<n>``: page ``n``; a post stores that page's controls and
  goes on (``action=back`` goes back, ``action=save`` stays with "saved"), the last page's
  post submits and redirects to ``/f/<form>/<sid>/done``, the confirmation with the
  reference number;
- ``GET /f/<form>/<sid>/<n>/fragment``: the page's ``<form>`` alone (for ``js: fetch``);
- ``POST /f/<form>/<sid>/<n>/snapshot``: the page's script sends the form's values on
  every change, so what a filler left in the controls is known without a submit;
- ``GET /_admin/runs/<tag>``: JSON of the run's applications: ``received`` (control name →
  the values of the last post of its page), ``current`` (the same, with the snapshots),
  ``submitted``, ``ref``, ``posts``;
- ``POST /_admin/reset``.

The site refuses nothing: what it received is judged by the checker, not by it.
"""

from __future__ import annotations

import socket
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from flask import Flask, abort, jsonify, redirect, request

from tests.forms_foreign import render
from tests.forms_foreign.manifest import Form, confirmation_text, reference

PORTS = range(18500, 18600)  # this suite's port range
FETCH_DELAY = 0.8  # seconds the site takes to answer a ``js: fetch`` page's request


@dataclass
class Application:
    form_id: str
    run: str
    reached: int = 1
    received: dict[str, list[str]] = field(default_factory=dict)  # by the posts
    current: dict[str, list[str]] = field(default_factory=dict)  # posts and snapshots
    raw: list[dict[str, list[str]]] = field(default_factory=list)  # every post, all keys
    ref: str = ""

    def as_json(self) -> dict:
        return {
            "form_id": self.form_id,
            "submitted": bool(self.ref),
            "ref": self.ref,
            "received": self.received,
            "current": self.current,
            "posts": self.raw,
            "reached": self.reached,
        }


def create_app(forms: list[Form]) -> Flask:
    app = Flask(__name__)
    by_id = {f.id: f for f in forms}
    apps: dict[str, Application] = {}
    serial = [0]
    lock = threading.Lock()

    def lookup(form_id: str, sid: str) -> tuple[Form, Application]:
        form, application = by_id.get(form_id), apps.get(sid)
        if form is None or application is None or application.form_id != form_id:
            abort(404)
        return form, application

    @app.get("/")
    def home():
        links = "".join(f'<li><a href="/f/{f.id}">{f.title}</a></li>' for f in forms)
        return (
            f'<!doctype html><html><head><meta charset="utf-8"><title>Services</title>'
            f"</head><body><h1>Services</h1><ul>{links}</ul></body></html>"
        )

    @app.get("/help")
    @app.get("/login")
    def other():
        return (
            '<!doctype html><html><head><meta charset="utf-8"><title>Help</title></head>'
            "<body><p>Help / 帮助</p></body></html>"
        )

    @app.get("/f/<form_id>")
    def start(form_id: str):
        if form_id not in by_id:
            abort(404)
        sid = uuid.uuid4().hex[:12]
        with lock:
            apps[sid] = Application(form_id, request.args.get("run", ""))
        return redirect(f"/f/{form_id}/{sid}/1")

    @app.get("/f/<form_id>/<sid>/<int:n>")
    def show(form_id: str, sid: str, n: int):
        form, application = lookup(form_id, sid)
        if application.ref:
            return redirect(f"/f/{form_id}/{sid}/done")
        if not 1 <= n <= application.reached:
            return redirect(f"/f/{form_id}/{sid}/{application.reached}")
        base = f"/f/{form_id}/{sid}/{n}"
        return render.page_html(
            form,
            n,
            base,
            fragment_url=base + "/fragment",
            snapshot_url=base + "/snapshot",
            notice=request.args.get("notice", ""),
        )

    @app.post("/f/<form_id>/<sid>/<int:n>/snapshot")
    def snapshot(form_id: str, sid: str, n: int):
        form, application = lookup(form_id, sid)
        if not application.ref and 1 <= n <= len(form.pages):
            with lock:
                for name in _names(form, n):
                    application.current[name] = request.form.getlist(name)
        return "", 204

    @app.get("/f/<form_id>/<sid>/<int:n>/fragment")
    def fragment(form_id: str, sid: str, n: int):
        form, application = lookup(form_id, sid)
        if not 1 <= n <= application.reached:
            abort(404)
        time.sleep(FETCH_DELAY)  # a slow back end: the form arrives well after the load
        return render.form_markup(form, n, f"/f/{form_id}/{sid}/{n}")

    @app.post("/f/<form_id>/<sid>/<int:n>")
    def post(form_id: str, sid: str, n: int):
        form, application = lookup(form_id, sid)
        if application.ref:
            return redirect(f"/f/{form_id}/{sid}/done")
        if not 1 <= n <= application.reached:
            abort(409)
        names = _names(form, n)
        action = request.form.get("action", "")
        with lock:
            application.raw.append({k: request.form.getlist(k) for k in request.form})
            for name in names:
                application.received[name] = application.current[name] = request.form.getlist(name)
            if action == "back":
                return redirect(f"/f/{form_id}/{sid}/{max(1, n - 1)}")
            if action == "save":
                notice = "草稿已保存" if form.lang == "zh" else "Draft saved"
                return redirect(f"/f/{form_id}/{sid}/{n}?notice={notice}")
            if n < len(form.pages):
                application.reached = max(application.reached, n + 1)
                return redirect(f"/f/{form_id}/{sid}/{n + 1}")
            serial[0] += 1
            application.ref = reference(form, serial[0])
        return redirect(f"/f/{form_id}/{sid}/done")

    @app.get("/f/<form_id>/<sid>/done")
    def done(form_id: str, sid: str):
        form, application = lookup(form_id, sid)
        if not application.ref:
            return redirect(f"/f/{form_id}/{sid}/{application.reached}")
        return render.done_html(form, confirmation_text(form, application.ref))

    @app.get("/_admin/runs/<run>")
    def runs(run: str):
        return jsonify([a.as_json() for a in apps.values() if a.run == run])

    @app.post("/_admin/reset")
    def reset():
        with lock:
            apps.clear()
        return "", 204

    return app


def _names(form: Form, n: int) -> list[str]:
    """The control names of page ``n`` (its consent on the last page)."""
    names = [name for c in form.pages[n - 1].controls for name in c.names]
    if form.consent is not None and n == len(form.pages):
        names.append(form.consent.name)
    return names


def free_port(ports: range = PORTS) -> int:
    """The first port of ``ports`` nobody listens on."""
    for port in ports:
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError(f"no free port in {ports.start}-{ports.stop - 1}")


@contextmanager
def serving(app: Flask, port: int | None = None) -> Iterator[str]:
    """``app`` served by werkzeug in a thread; yields its base URL."""
    from werkzeug.serving import make_server

    server = make_server("127.0.0.1", port or free_port(), app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, name="forms-foreign", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        thread.join(timeout=10)
