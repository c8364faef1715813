"""失业保险金申领 on two pages: 基本信息 → 办理信息."""

from __future__ import annotations

from datetime import date, timedelta

from tests.portal.conftest import UNEMPLOYMENT_PAGES
from tests.portal.page import Page

BASIC, DETAILS = UNEMPLOYMENT_PAGES


def test_two_pages_then_success(portal, start, post, applications):
    url = start("unemployment_benefit")
    first = Page(portal.get(url))
    assert first.text("h1") == ["失业保险金申领"] and first.text("h2") == ["基本信息"]
    assert first.labels() == {"name": "姓名", "id_type": "证件类型", "id_number": "身份证号",
                              "phone": "手机号码"}
    assert first.text("button") == ["退出登录", "下一步"]
    second = post(url, BASIC, action="next")
    assert second.url == url and second.text("h2") == ["办理信息"]
    assert second.labels() == {"separation_date": "离职日期", "separation_reason": "离职原因",
                               "bank_card": "银行卡号", "agree": "我已阅读并同意承诺书"}
    assert second.by_id("separation_date")["attrs"]["type"] == "date"
    assert second.text("button") == ["退出登录", "提交申请", "上一步"]
    assert applications() == []
    done = post(url, DETAILS)
    assert done.text("h1") == ["提交成功"] and done.application_no
    [application] = applications()
    assert application["values"] == {
        "name": "陈静", "id_type": "居民身份证", "id_number": "320102198809150628",
        "phone": "13800138005", "separation_date": "2025-06-30",
        "separation_reason": "协商一致解除", "bank_card": "6013820800012345672", "agree": True}


def test_the_first_page_is_checked_before_going_on(start, post):
    url = start("unemployment_benefit")
    page = post(url, {**BASIC, "name": "王芳"}, action="next")
    assert page.text("h2") == ["基本信息"]
    assert page.field_errors() == {"name": "姓名与身份证号不一致"}
    assert post(url, BASIC, action="next").text("h2") == ["办理信息"]


def test_second_page_errors(start, post, applications):
    url = start("unemployment_benefit")
    post(url, BASIC, action="next")
    tomorrow = (date.today() + timedelta(days=2)).isoformat()
    page = post(url, {"separation_date": tomorrow, "bank_card": "6214830571234567896"})
    assert page.text("h2") == ["办理信息"]
    assert page.field_errors() == {"separation_date": "离职日期不能晚于今天",
                                   "separation_reason": "请选择离职原因",
                                   "bank_card": "银行卡不支持", "agree": "请勾选承诺书"}
    page = post(url, {**DETAILS, "bank_card": "6013820800012345671"})
    assert page.field_errors() == {"bank_card": "银行卡号格式不正确"}
    assert post(url, DETAILS).text("h1") == ["提交成功"]
    assert len(applications()) == 1


def test_back_keeps_both_pages(start, post):
    url = start("unemployment_benefit")
    post(url, BASIC, action="next")
    page = post(url, {"bank_card": "6013820800012345672"}, action="back")
    assert page.text("h2") == ["基本信息"]
    assert page.by_id("phone")["attrs"]["value"] == "13800138005"
    page = post(url, BASIC, action="next")
    assert page.by_id("bank_card")["attrs"]["value"] == "6013820800012345672"
