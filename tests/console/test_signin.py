"""Signing in to the console: roles, CSRF, passwords, tokens, cookies, limits, audit."""

from __future__ import annotations

import time

import jwt
import pytest

from si_agent.server import create_app
from si_agent.server.console.blueprint import OPEN_ENDPOINTS
from si_agent.server.revocation import revoke_token
from tests.console.conftest import PASSWORD, ROOT, SECRET, console_settings, csrf, sign_in, token


def console_routes(app) -> list[tuple[str, str]]:
    """Every (method, path) of the console that needs a sign-in."""
    out = []
    for rule in app.url_map.iter_rules():
        if rule.endpoint.startswith("console.") and rule.endpoint not in OPEN_ENDPOINTS:
            out += [(m, rule.rule) for m in sorted(rule.methods - {"HEAD", "OPTIONS"})]
    return out


def audit_entries(app, action: str | None = None):
    entries = app.config["SI_CONTROLLER"].audit.query(limit=100)
    return [e for e in entries if e.event == "staff" and (action is None or e.action == action)]


def test_every_route_refuses_a_citizen_token(app, client):
    citizen = client.post("/api/token", json={"user_id": "citizen-1"}).get_json()["access_token"]
    headers = {"Authorization": f"Bearer {citizen}"}
    routes = console_routes(app)
    assert {
        ("GET", "/console/"),
        ("GET", "/console/hits"),
        ("POST", "/console/hits"),
        ("POST", "/console/api/hits"),
        ("POST", "/console/logout"),
    } <= set(routes)
    for method, path in routes:
        data = {"csrf_token": csrf(client, headers=headers)} if method == "POST" else None
        answer = client.open(path, method=method, headers=headers, data=data)
        assert answer.status_code == 403, (method, path, answer.status_code)
        assert "没有工作人员权限" in answer.get_data(as_text=True)


def test_a_token_with_some_other_role_is_refused_too(client):
    answer = client.get(
        "/console/", headers={"Authorization": f"Bearer {token(roles=['auditor'])}"}
    )
    assert answer.status_code == 403


@pytest.mark.parametrize("role", ["staff", "admin"])
def test_a_staff_or_admin_token_opens_the_console(client, role):
    headers = {"Authorization": f"Bearer {token('wang', [role])}"}
    page = client.get("/console/", headers=headers)
    assert page.status_code == 200
    text = page.get_data(as_text=True)
    assert 'data-testid="staff-name">wang<' in text
    assert ("管理员" if role == "admin" else "工作人员") in text


@pytest.mark.parametrize(
    "bad",
    [
        token(roles=["staff"], lifetime=-10),
        token(roles=["staff"], secret="another-secret-of-32-characters-x"),
        "not.a.token",
    ],
)
def test_an_expired_or_forged_token_is_401(client, bad):
    assert client.get("/console/", headers={"Authorization": f"Bearer {bad}"}).status_code == 401


def test_without_a_sign_in_pages_go_to_the_sign_in_page_and_posts_are_401(client):
    for path in ("/console/", "/console/hits"):
        answer = client.get(path)
        assert answer.status_code == 303
        assert answer.headers["Location"].endswith("/console/login")
    token_ = csrf(client)
    assert (
        client.post("/console/hits", data={"csrf_token": token_, "question": "社保卡"}).status_code
        == 401
    )
    api = client.post(
        "/console/api/hits", json={"question": "社保卡"}, headers={"X-CSRFToken": token_}
    )
    assert api.status_code == 401
    assert api.get_json()["error"]["message"] == "请先登录工作人员控制台。"


def test_posts_without_a_valid_csrf_token_are_400(client, accounts):
    accounts.add("alice", PASSWORD)
    assert sign_in(client).status_code == 303
    good = csrf(client, "/console/hits")
    for path in ("/console/login", "/console/login/token", "/console/logout", "/console/hits"):
        assert client.post(path, data={"name": "alice", "password": PASSWORD}).status_code == 400
        assert client.post(path, data={"csrf_token": "forged"}).status_code == 400
    assert client.post("/console/api/hits", json={"question": "x"}).status_code == 400
    assert (
        client.post(
            "/console/api/hits", json={"question": "x"}, headers={"X-CSRFToken": good + "x"}
        ).status_code
        == 400
    )
    # The token of one browser's session is no good in another's.
    other = client.application.test_client()
    csrf(other)
    assert other.post("/console/logout", data={"csrf_token": good}).status_code == 400
    # Still signed in: none of the refused posts signed anyone out.
    assert client.get("/console/").status_code == 200


def test_the_csrf_page_explains_in_chinese(client):
    answer = client.post("/console/login", data={"name": "a", "password": "b"})
    assert answer.status_code == 400
    assert "页面已过期" in answer.get_data(as_text=True)


def test_a_wrong_password_is_refused_and_audited(app, client, accounts):
    accounts.add("alice", PASSWORD)
    for name, password in (("alice", "wrong password here"), ("nobody", PASSWORD)):
        answer = sign_in(client, name, password)
        assert answer.status_code == 401
        assert "用户名或密码不正确" in answer.get_data(as_text=True)
        assert client.get("/console/").status_code == 303  # not signed in
    failed = audit_entries(app, "sign_in_failed")
    assert [e.actor for e in failed] == ["<unknown account>", "alice"]  # newest first
    assert all(e.outcome == "refused" and e.business == "" for e in failed)
    assert "nobody" not in str([e.model_dump() for e in failed])  # a typo is not written


def test_signing_in_sets_a_strict_cookie_and_is_audited(app, client, accounts):
    accounts.add("alice", PASSWORD, role="admin")
    before = time.time()
    answer = sign_in(client)
    assert answer.status_code == 303
    assert answer.headers["Location"].endswith("/console/")
    cookie = answer.headers["Set-Cookie"]
    assert cookie.startswith("si_console=")
    for flag in ("HttpOnly", "SameSite=Strict", "Path=/console"):
        assert flag in cookie
    assert "Secure" not in cookie  # plain http (https: the next test)
    page = client.get("/console/").get_data(as_text=True)
    assert 'data-testid="staff-name">alice<' in page and "管理员" in page
    (entry,) = audit_entries(app, "signed_in")
    assert entry.actor == "alice" and entry.outcome == "succeeded"
    assert entry.at.timestamp() >= before - 1
    assert "roles staff,admin" in entry.detail
    assert accounts.get("alice").last_login >= before - 1


def test_the_cookie_is_secure_over_https(app, accounts):
    accounts.add("alice", PASSWORD)
    client = app.test_client()
    token_ = csrf(client, base_url="https://localhost")
    answer = client.post(
        "/console/login",
        base_url="https://localhost",
        headers={"Referer": "https://localhost/console/login"},
        data={"name": "alice", "password": PASSWORD, "csrf_token": token_},
    )
    assert answer.status_code == 303
    assert "Secure" in answer.headers["Set-Cookie"]
    # Over HTTPS a POST from another site (or with no Referer) is refused too.
    other = app.test_client()
    token_ = csrf(other, base_url="https://localhost")
    for referer in ({"Referer": "https://evil.example/"}, {}):
        refused = other.post(
            "/console/login",
            base_url="https://localhost",
            headers=referer,
            data={"name": "alice", "password": PASSWORD, "csrf_token": token_},
        )
        assert refused.status_code == 400


def test_signing_out_ends_the_session_even_for_a_copied_cookie(app, client, accounts):
    accounts.add("alice", PASSWORD)
    sign_in(client)
    copied = client.get_cookie("si_console", path="/console").value
    answer = client.post("/console/logout", data={"csrf_token": csrf(client, "/console/")})
    assert answer.status_code == 200
    assert "您已退出登录" in answer.get_data(as_text=True)
    assert client.get("/console/").status_code == 303
    thief = app.test_client()
    thief.set_cookie("si_console", copied, path="/console")
    assert thief.get("/console/").status_code == 303
    assert [e.actor for e in audit_entries(app, "signed_out")] == ["alice"]


def test_a_gateway_token_signs_in_until_it_expires(app, client):
    answer = client.post(
        "/console/login/token",
        data={"csrf_token": csrf(client), "token": token("zhao", ["staff"], lifetime=600)},
    )
    assert answer.status_code == 303
    page = client.get("/console/").get_data(as_text=True)
    assert 'data-testid="staff-name">zhao<' in page
    sessions = app.config["SI_CONSOLE_SESSIONS"]
    sid = None
    with client.session_transaction("/console/") as cookie_session:
        sid = cookie_session["sid"]
    assert sessions.get(sid).expires <= time.time() + 601
    assert sessions.get(sid).source == "token"
    (entry,) = audit_entries(app, "signed_in")
    assert entry.actor == "zhao" and "gateway token" in entry.detail


@pytest.mark.parametrize(
    ("bad", "status", "text"),
    [
        # made when the test runs: a token made at collection would have expired by then
        (lambda: token("citizen-1"), 403, "没有工作人员权限"),  # no roles claim: a citizen's
        (lambda: token("zhao", ["staff"], lifetime=-5), 401, "令牌无效或已过期"),
        (lambda: token("zhao", ["staff"], type="refresh"), 401, "令牌无效或已过期"),
        (lambda: "garbage", 401, "令牌无效或已过期"),
    ],
    ids=["citizen", "expired", "refresh", "garbage"],
)
def test_a_bad_token_does_not_sign_in(app, client, bad, status, text):
    answer = client.post(
        "/console/login/token", data={"csrf_token": csrf(client), "token": bad()}
    )
    assert answer.status_code == status
    assert text in answer.get_data(as_text=True)
    assert client.get("/console/").status_code == 303
    (entry,) = audit_entries(app, "sign_in_failed")
    assert entry.actor == "<token>"


def test_a_revoked_token_does_not_sign_in(app, client):
    staff_token = token("zhao", ["staff"])
    with app.test_request_context():
        revoke_token(jwt.decode(staff_token, SECRET, algorithms=["HS256"]))
    answer = client.post(
        "/console/login/token", data={"csrf_token": csrf(client), "token": staff_token}
    )
    assert answer.status_code == 401
    assert (
        client.get("/console/", headers={"Authorization": f"Bearer {staff_token}"}).status_code
        == 401
    )


def test_sign_in_attempts_are_rate_limited(tmp_path):
    app = create_app(console_settings(tmp_path, console_login_limit="3 per minute"))
    app.config["SI_STAFF_ACCOUNTS"].add("alice", PASSWORD)
    client = app.test_client()
    codes = [sign_in(client, "alice", "wrong password here").status_code for _ in range(3)]
    assert codes == [401, 401, 401]
    limited = sign_in(client, "alice", PASSWORD)  # even the right password now
    assert limited.status_code == 429
    assert int(limited.headers["Retry-After"]) >= 1
    assert "登录尝试次数过多" in limited.get_data(as_text=True)


def test_successful_sign_ins_do_not_count(tmp_path):
    """An office behind one address signs in many times a day: only failures count."""
    app = create_app(console_settings(tmp_path, console_login_limit="3 per minute"))
    for name in ("alice", "bob"):
        app.config["SI_STAFF_ACCOUNTS"].add(name, PASSWORD)
    client = app.test_client()
    assert [sign_in(client, "alice", PASSWORD).status_code for _ in range(6)] == [303] * 6
    assert sign_in(client, "bob", "wrong password here").status_code == 401
    assert sign_in(client, "bob", PASSWORD).status_code == 303


def test_console_pages_are_never_framed_nor_cached(client):
    page = client.get("/console/login")
    assert "frame-ancestors 'none'" in page.headers["Content-Security-Policy"]
    assert "script-src 'self'" in page.headers["Content-Security-Policy"]
    assert page.headers["Cache-Control"] == "no-store"
    assert page.headers["Referrer-Policy"] == "same-origin"  # the HTTPS CSRF check reads it
    assert client.get("/console/static/console.css").status_code == 200


def test_the_citizen_api_is_untouched_by_the_console(client):
    """No cookie and no CSRF check on the citizen API."""
    pair = client.post("/api/token", json={"user_id": "citizen-2"})
    assert pair.status_code == 200 and "Set-Cookie" not in pair.headers
    headers = {"Authorization": f"Bearer {pair.get_json()['access_token']}"}
    turn = client.post("/api/chat", json={"message": "你好"}, headers=headers)
    assert turn.status_code == 200 and "Set-Cookie" not in turn.headers


def test_staff_entries_in_the_admin_audit_api_fit_its_openapi_schema(app, client, accounts):
    import jsonschema
    import yaml

    accounts.add("alice", PASSWORD)
    sign_in(client)
    admin = {"Authorization": f"Bearer {token('ops', ['admin'])}"}
    (entry,) = client.get("/api/admin/audit", headers=admin).get_json()["entries"]
    assert (entry["event"], entry["actor"], entry["action"]) == ("staff", "alice", "signed_in")
    spec = yaml.safe_load((ROOT / "si_agent" / "server" / "openapi.yaml").read_text("utf-8"))
    jsonschema.validate(entry, spec["components"]["schemas"]["AuditEntry"])
