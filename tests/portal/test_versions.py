"""Version 2 of 社保关系转移: relabelled controls, new ids and one more required field."""

from __future__ import annotations

from si_agent.demo_portal import create_portal_app
from tests.portal.conftest import log_in
from tests.portal.page import Page

V2_LABELS = {"applicant_name": "申请人姓名", "cert_type": "证件类型", "cert_no": "证件号码",
             "contact_phone": "联系电话", "origin_city": "原参保地", "target_city": "新参保地",
             "memo": "备注", "commitment": "我已阅读并同意承诺书"}
V2_VALID = {"applicant_name": "张伟", "cert_type": "居民身份证", "cert_no": "330122196303150178",
            "contact_phone": "13800138001", "origin_city": "杭州市", "target_city": "苏州市",
            "commitment": "yes"}


def test_v2_is_asked_by_the_url_and_kept_by_the_draft(portal, start, post, applications):
    url = start("social_transfer", "?v=2")
    page = Page(portal.get(url))
    assert page.labels() == V2_LABELS
    assert page.by_id("contact_phone")["attrs"]["type"] == "tel"
    assert "required" in page.by_id("contact_phone")["attrs"]
    page = post(url, {**V2_VALID, "contact_phone": "", "target_city": "杭州市"})
    assert page.field_errors() == {"contact_phone": "请填写联系电话",
                                   "target_city": "新参保地不能与原参保地相同"}
    assert post(url, V2_VALID).text("h1") == ["提交成功"]
    [application] = applications()
    assert application["values"]["phone"] == "13800138001"
    assert application["values"]["from_city"] == "杭州市"  # stored under the business keys


def test_v1_stays_the_default(portal, start):
    assert "转出地" in Page(portal.get(start("social_transfer"))).labels().values()
    assert "转出地" in Page(portal.get(start("social_transfer", "?v=1"))).labels().values()


def test_an_app_built_for_v2(tmp_path):
    client = create_portal_app(tmp_path / "p.db", version=2).test_client()
    log_in(client)
    page = Page(client.get(client.get("/forms/social_transfer").location))
    assert page.labels() == V2_LABELS
    page = Page(client.get(client.get("/forms/card_apply").location))  # no v2: stays v1
    assert page.label_of("name") == "姓名"


def test_unknown_versions(portal):
    assert portal.get("/forms/social_transfer?v=3").status_code == 404
    assert portal.get("/forms/card_apply?v=2").status_code == 404
    try:
        create_portal_app("unused.db", version=3)
    except ValueError as exc:
        assert "version" in str(exc)
    else:
        raise AssertionError("version 3 was accepted")
