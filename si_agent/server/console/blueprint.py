"""The console's blueprint, its navigation and the checks every route runs.

The checks (CSRF, then who is signed in) are described in the package docstring;
a view reads the signed-in staff member with ``signed_in()``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from flask import Blueprint, current_app, g, redirect, render_template, request, url_for
from flask_wtf.csrf import CSRFError
from werkzeug.exceptions import HTTPException, RequestEntityTooLarge

from si_agent.server.console import texts
from si_agent.server.console.identity import NotSignedIn, Staff, identify
from si_agent.server.errors import ApiError
from si_agent.server.ui import security_headers

bp = Blueprint(
    "console",
    __name__,
    url_prefix="/console",
    template_folder="templates",
    static_folder="static",
    static_url_path="/static",
)

# The navigation: (endpoint, label). A screen added later adds its line here.
SECTIONS: tuple[tuple[str, str], ...] = (
    ("console.index", "概览"),
    ("console.hits", "命中测试"),
    ("console.documents", "知识文档"),
    ("console.conversations", "对话审核"),
    ("console.submissions_page", "办理记录"),
    ("console.analytics", "统计分析"),
    ("console.handoff", "人工服务"),
    ("console.curated", "常用答案"),
    ("console.businesses", "业务配置"),
    ("console.moderation", "敏感词"),
)
# Routes open without signing in (the sign-in pages and the stylesheet).
OPEN_ENDPOINTS = frozenset({"console.login", "console.login_token", "console.static"})
UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})


def signed_in() -> Staff:
    """The staff member of this request (set by the checks below)."""
    staff = g.get("si_staff")
    if staff is None:  # only a view in OPEN_ENDPOINTS gets here, and calls it by mistake
        raise NotSignedIn()
    return staff


@bp.before_request
def _checks():
    if request.method in UNSAFE_METHODS:
        current_app.extensions["si_csrf"].protect()  # raises CSRFError (400)
    if request.endpoint in OPEN_ENDPOINTS:
        return None
    g.si_staff = identify()  # raises NotSignedIn or ApiError 403
    return None


@bp.after_request
def _secure(response):
    response.headers.update(security_headers(()))  # never framed, whatever the chat page allows
    # Same-site POSTs carry their Referer: over HTTPS the CSRF check requires it.
    response.headers["Referrer-Policy"] = "same-origin"
    response.headers["Cache-Control"] = "no-store"
    return response


@bp.context_processor
def _page_globals() -> dict:
    return {"sections": SECTIONS, "staff": g.get("si_staff"), "texts": texts}


@bp.errorhandler(NotSignedIn)
def _not_signed_in(err: NotSignedIn):
    if request.method in UNSAFE_METHODS or request.path.startswith("/console/api/"):
        return _error(401, texts.SIGN_IN_FIRST)
    return redirect(url_for("console.login"), code=303)


@bp.errorhandler(CSRFError)
def _csrf(err: CSRFError):
    return _error(400, texts.CSRF_FAILED)


# A screen's own request size limit, by endpoint (``request_limit``): the API's
# (``SI_MAX_BODY_BYTES``, 64 KB) is too small for a spreadsheet, a document, a word
# list or a business file, and is applied by the CSRF check reading the form.
_LIMITS: dict[str, Callable[[], int]] = {}
FORM_OVERHEAD = 64 * 1024  # multipart boundaries, the CSRF token and the other fields


def request_limit(endpoints: Iterable[str], max_bytes: int | Callable[[], int]) -> None:
    """POSTs to ``endpoints`` may be ``max_bytes`` long (a number, or a function read per
    request: a setting)."""
    size = max_bytes if callable(max_bytes) else (lambda: max_bytes)
    for endpoint in endpoints:
        _LIMITS[endpoint] = size


def url_encoded(max_bytes: int) -> int:
    """The request size of a form whose text field holds ``max_bytes`` of UTF-8: URL
    encoding writes each byte of a Chinese character as %XX."""
    return 3 * max_bytes + FORM_OVERHEAD


@bp.before_app_request  # before the blueprint's checks, whose CSRF check reads the form
def _request_limit() -> None:
    size = _LIMITS.get(request.endpoint or "")
    if size is not None and request.method in UNSAFE_METHODS:
        request.max_content_length = size()


# The page a screen shows for a request over its size limit, by endpoint (``too_large``).
_TOO_LARGE: dict[str, Callable[[RequestEntityTooLarge], object]] = {}


def too_large(endpoints: Iterable[str]):
    """Register the decorated function as the 413 page of ``endpoints`` (a blueprint
    has one handler per exception: each screen's own would replace the others')."""

    def register(handler: Callable[[RequestEntityTooLarge], object]):
        for endpoint in endpoints:
            _TOO_LARGE[endpoint] = handler
        return handler

    return register


@bp.errorhandler(RequestEntityTooLarge)
def _too_large(err: RequestEntityTooLarge):
    # Raised by the CSRF check reading the form, before the caller was identified.
    if g.get("si_staff") is None and request.endpoint not in OPEN_ENDPOINTS:
        try:
            g.si_staff = identify()
        except NotSignedIn as exc:
            return _not_signed_in(exc)
        except ApiError as exc:
            return _api_error(exc)
    handler = _TOO_LARGE.get(request.endpoint or "")
    return handler(err) if handler is not None else _http_error(err)


@bp.errorhandler(HTTPException)
def _http_error(err: HTTPException):
    status = err.code or 500
    return _error(status, texts.HTTP_ERRORS.get(status, texts.HTTP_ERROR))


@bp.errorhandler(ApiError)
def _api_error(err: ApiError):
    return _error(err.status, texts.ROLE_REQUIRED if err.status == 403 else err.message)


def _error(status: int, message: str):
    if request.path.startswith("/console/api/"):
        from flask import jsonify

        response = jsonify(error={"code": str(status), "message": message})
        response.status_code = status
        return response
    return render_template("console/error.html", message=message, status=status), status
