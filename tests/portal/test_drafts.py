"""Drafts: corrections continue the same draft; a submitted draft never submits again."""

from __future__ import annotations

import re

from tests.portal.conftest import VALID
from tests.portal.page import Page


def test_a_resubmission_after_a_field_error_creates_one_application(start, post, applications):
    url = start("social_transfer")
    page = post(url, {**VALID["social_transfer"], "id_type": "护照"})
    assert page.field_errors() == {"id_type": "证件类型不存在"} and page.url == url
    page = post(url, VALID["social_transfer"])
    assert page.text("h1") == ["提交成功"]
    [application] = applications()
    assert application["draft_id"] == url.rsplit("/", 1)[1]


def test_a_submitted_draft_shows_the_same_number(portal, start, post, applications):
    url = start("card_apply")
    number = post(url, VALID["card_apply"]).application_no
    assert re.fullmatch(r"SI\d{14}", number)
    again = Page(portal.get(url))
    assert again.text("h1") == ["提交成功"] and again.application_no == number
    again = post(url, {**VALID["card_apply"], "name": "李四"})
    assert again.application_no == number and again.field_errors() == {}
    assert len(applications()) == 1


def test_each_draft_is_its_own_application(start, post, applications):
    first = post(start("card_apply"), VALID["card_apply"]).application_no
    second = post(start("card_apply"), VALID["card_apply"]).application_no
    assert first[:10] == second[:10] and int(second[10:]) == int(first[10:]) + 1
    assert [a["application_no"] for a in applications()] == [second, first]  # newest first


def test_a_draft_keeps_posted_values_when_reopened(portal, start, post):
    url = start("card_apply")
    post(url, {"name": "王芳", "phone": "123"})
    page = Page(portal.get(url))
    assert page.by_id("name")["attrs"]["value"] == "王芳"
    assert page.by_id("phone")["attrs"]["value"] == "123"


def test_reset_forgets_everything(portal, start, post, applications):
    url = start("card_apply")
    post(url, VALID["card_apply"])
    assert portal.post("/_admin/reset").get_json() == {"ok": True}
    assert applications() == [] and portal.get(url).status_code == 404
    number = post(start("card_apply"), VALID["card_apply"]).application_no
    assert number.endswith("000001")
