"""The widget over HTTP: ``/widget.js`` as a cacheable script, and who may frame the page.

``SI_EMBED_ORIGINS`` decides the chat page's ``frame-ancestors``: none by default
(plus ``X-Frame-Options: DENY``), ``'self'`` and the listed origins when set. The
browser side (a host page on another origin) is ``tests/browser/test_widget.py``.
"""

from __future__ import annotations

import re

import pytest

from si_agent.config.settings import Settings
from si_agent.server import create_app

BUREAU = "https://www.hrss.example.gov.cn"
MOBILE = "http://m.hrss.example.gov.cn:8080"


def _directives(response) -> dict[str, str]:
    policy = response.headers["Content-Security-Policy"]
    return dict(part.strip().partition(" ")[::2] for part in policy.split(";"))


def test_widget_script_is_served_as_cacheable_javascript(client):
    res = client.get("/widget.js")
    assert res.status_code == 200
    assert res.mimetype == "text/javascript"
    assert res.headers["X-Content-Type-Options"] == "nosniff"
    assert res.headers["Cache-Control"] == "public, max-age=3600"
    # Loadable from pages that require CORP (Cross-Origin-Embedder-Policy).
    assert res.headers["Cross-Origin-Resource-Policy"] == "cross-origin"
    body = res.get_data(as_text=True)
    assert "window.SiAgentWidget" in body and "/?embed=1" in body
    # A conditional request is answered from the browser's copy.
    again = client.get("/widget.js", headers={"If-None-Match": res.headers["ETag"]})
    assert again.status_code == 304


def test_widget_script_is_plain_es5_without_eval(client):
    """Old phones' browsers run it: no ES2015 syntax, nothing evaluated from strings."""
    body = client.get("/widget.js").get_data(as_text=True)
    code = re.sub(r"/\*.*?\*/|^\s*//.*$", "", body, flags=re.S | re.M)
    for pattern in (r"=>", r"`", r"\blet\s", r"\bconst\s", r"\bclass\s", r"\.\.\.",
                    r"\beval\s*\(", r"new\s+Function", r"innerHTML", r"\basync\b",
                    r"\bawait\b", r"setTimeout\(\s*['\"]"):
        assert not re.search(pattern, code), pattern


def test_page_may_not_be_framed_by_default(client):
    for path in ("/", "/?embed=1", "/ui-config.json", "/widget.js"):
        res = client.get(path)
        assert _directives(res)["frame-ancestors"] == "'none'", path
        assert res.headers["X-Frame-Options"] == "DENY", path


@pytest.fixture
def embed_client(settings):
    return create_app(settings.replace(embed_origins=(BUREAU, MOBILE))).test_client()


def test_embed_origins_are_the_frame_ancestors(embed_client):
    for path in ("/", "/?embed=1"):
        res = embed_client.get(path)
        assert res.status_code == 200 and "text/html" in res.content_type
        directives = _directives(res)
        assert directives["frame-ancestors"] == f"'self' {BUREAU} {MOBILE}"
        # The rest of the policy is as strict as ever.
        assert directives["script-src"] == "'self'" and directives["connect-src"] == "'self'"
        # X-Frame-Options has no allow-list; DENY would win over frame-ancestors in
        # browsers that know only the older header.
        assert "X-Frame-Options" not in res.headers


def test_embed_origins_from_the_environment(settings):
    parsed = Settings.from_env({"SI_EMBED_ORIGINS": f"{BUREAU}/, HTTP://M.HRSS.example.gov.cn:8080"})
    assert parsed.embed_origins == (BUREAU, MOBILE)
    res = create_app(settings.replace(embed_origins=parsed.embed_origins)).test_client().get("/")
    assert _directives(res)["frame-ancestors"] == f"'self' {BUREAU} {MOBILE}"


def test_api_answers_are_unchanged_by_embedding(embed_client):
    """The frame calls the API on its own origin: no CORS is opened by embedding."""
    res = embed_client.post("/api/token", json={"user_id": "a"}, headers={"Origin": BUREAU})
    assert res.status_code == 200 and "Access-Control-Allow-Origin" not in res.headers
