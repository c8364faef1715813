"""Injected faults: server errors and slow answers on form POSTs."""

from __future__ import annotations

import time

from tests.portal.conftest import VALID
from tests.portal.page import Page


def test_fail_next_answers_500_without_taking_effect(portal, start, post, applications):
    url = start("card_apply")
    assert portal.post("/_admin/fail_next", json={"count": 1, "status": 500}).status_code == 200
    page = post(url, VALID["card_apply"])
    assert page.status == 500 and page.text("h1") == ["系统繁忙，请稍后再试"]
    assert "错误代码：500" in page.alert()
    assert applications() == []
    assert Page(portal.get(url)).text("h1") == ["社保卡申领"]  # GETs are not faulted
    assert post(url, VALID["card_apply"]).text("h1") == ["提交成功"]
    assert len(applications()) == 1


def test_fail_next_counts(start, post, portal):
    url = start("card_apply")
    portal.post("/_admin/fail_next", json={"count": 2, "status": 503})
    assert post(url, VALID["card_apply"]).status == 503
    assert post(url, VALID["card_apply"]).status == 503
    assert post(url, VALID["card_apply"]).status == 200


def test_a_failure_after_the_submission_is_found_by_reopening(portal, start, post,
                                                              applications):
    url = start("social_transfer")
    portal.post("/_admin/fail_next", json={"status": 500, "after": True})
    assert post(url, VALID["social_transfer"]).status == 500
    [application] = applications()
    again = Page(portal.get(url))
    assert again.text("h1") == ["提交成功"]
    assert again.application_no == application["application_no"]


def test_delay_slows_the_next_post(portal, start, post):
    url = start("card_apply")
    portal.post("/_admin/fail_next", json={"delay": 0.3})
    began = time.monotonic()
    assert post(url, VALID["card_apply"]).text("h1") == ["提交成功"]
    assert time.monotonic() - began >= 0.3


def test_bad_fault_requests(portal):
    assert portal.post("/_admin/fail_next", json={"count": "x"}).status_code == 400
    assert portal.post("/_admin/fail_next", json={"status": 200}).status_code == 400
    assert portal.post("/_admin/fail_next", json={"count": 1}).status_code == 400
