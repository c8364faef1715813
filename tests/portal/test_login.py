"""Login: every form URL needs one; a wrong password is refused; the portal can drop them all."""

from __future__ import annotations

from tests.portal.conftest import log_in
from tests.portal.page import Page


def test_forms_redirect_to_login_with_next(client):
    response = client.get("/forms/social_transfer?v=2")
    assert response.status_code == 302
    assert response.location == "/login?next=/forms/social_transfer?v%3D2"
    page = Page(client.get(response.location))
    assert page.label_of("username") == "用户名" and page.label_of("password") == "密码"
    assert page.by_id("password")["attrs"]["type"] == "password"
    assert "登录" in page.text("button")


def test_login_returns_to_next(client):
    response = client.post("/login", data={"username": "demo", "password": "demo123",
                                           "next": "/forms/card_apply"})
    assert response.status_code == 303 and response.location == "/forms/card_apply"
    assert client.get("/forms/card_apply").location.startswith("/forms/card_apply/drafts/")


def test_wrong_password_is_refused(client):
    page = Page(log_in(client, password="wrong"))
    assert page.status == 200 and page.alert() == "用户名或密码错误"
    assert client.get("/forms/card_apply").location.startswith("/login")


def test_credentials_come_from_the_environment(tmp_path, monkeypatch):
    from si_agent.demo_portal import create_portal_app

    monkeypatch.setenv("SI_PORTAL_USER", "clerk")
    monkeypatch.setenv("SI_PORTAL_PASSWORD", "s3cret")
    client = create_portal_app(tmp_path / "p.db").test_client()
    assert log_in(client).status_code == 200  # the defaults no longer work
    assert log_in(client, "clerk", "s3cret").status_code == 303


def test_an_outside_next_goes_home(client):
    response = client.post("/login", data={"username": "demo", "password": "demo123",
                                           "next": "//evil.example/"})
    assert response.location == "/"


def test_expired_sessions_must_log_in_again(portal, start):
    url = start("card_apply")
    assert portal.get(url).status_code == 200
    portal.post("/_admin/expire_sessions")
    response = portal.get(url)
    assert response.status_code == 302 and response.location == f"/login?next={url}"
    response = portal.post(url, data={"name": "王芳"})
    assert response.status_code == 302 and response.location.startswith("/login")
    log_in(portal)
    assert portal.get(url).status_code == 200


def test_logout(portal):
    portal.post("/logout")
    assert portal.get("/forms/card_apply").location.startswith("/login")
