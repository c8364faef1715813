"""Each business's form: labels tied to controls, server-side field errors, one submission."""

from __future__ import annotations

import pytest

from tests.portal.conftest import VALID
from tests.portal.page import Page

LABELS = {
    "social_transfer": {"name": "姓名", "id_type": "证件类型", "id_number": "身份证号",
                        "from_city": "转出地", "to_city": "转入地", "remarks": "备注",
                        "agree": "我已阅读并同意承诺书"},
    "card_apply": {"name": "姓名", "id_type": "证件类型", "id_number": "身份证号",
                   "phone": "手机号码", "bank": "合作银行", "mailing_address": "邮寄地址",
                   "agree": "我已阅读并同意承诺书"},
    "medical_filing": {"name": "姓名", "id_type": "证件类型", "id_number": "身份证号",
                       "insured_city": "参保城市", "destination_city": "就医城市",
                       "filing_type": "备案类型", "start_date": "备案开始日期", "remarks": "备注",
                       "agree": "我已阅读并同意承诺书"},
}
BUSINESS_NAMES = {"social_transfer": "社保关系转移", "card_apply": "社保卡申领",
                  "medical_filing": "异地就医备案"}
OPTIONAL = {"remarks"}


@pytest.mark.parametrize("business_id", sorted(LABELS))
def test_the_form_is_labelled_and_marks_required_controls(portal, start, business_id):
    url = start(business_id)
    assert url.startswith(f"/forms/{business_id}/drafts/")
    page = Page(portal.get(url))
    assert '<html lang="zh-CN">' in page.html and "<main>" in page.html
    assert page.text("h1") == [BUSINESS_NAMES[business_id]] and page.text("h2") == ["申请信息"]
    assert page.labels() == LABELS[business_id]
    for control_id in LABELS[business_id]:
        control = page.by_id(control_id)
        if control["tag"] == "fieldset":
            radios = [e for e in page.elements if e["attrs"].get("name") == control_id]
            assert all("required" in r["attrs"] for r in radios) and len(radios) == 4
            assert all(page.label_of(r["attrs"]["id"]) for r in radios)
        else:
            assert ("required" in control["attrs"]) == (control_id not in OPTIONAL)
    assert 'aria-hidden="true">*</span>' in page.html
    assert page.text("button")[-1] == "提交申请"
    assert page.by_id("id_type")["tag"] == "select"
    assert page.alert() == ""


def test_the_control_kinds(portal, start):
    page = Page(portal.get(start("card_apply")))
    assert page.by_id("phone")["attrs"]["type"] == "tel"
    assert page.by_id("mailing_address")["tag"] == "textarea"
    assert page.by_id("agree")["attrs"]["type"] == "checkbox"
    options = [e["text"] for e in page.elements if e["tag"] == "option"]
    assert options[:2] == ["请选择", "居民身份证"]
    page = Page(portal.get(start("medical_filing")))
    assert page.by_id("start_date")["attrs"]["type"] == "date"


@pytest.mark.parametrize("business_id", sorted(LABELS))
def test_an_empty_post_names_every_required_control(portal, start, post, applications,
                                                    business_id):
    url = start(business_id)
    page = post(url, {})
    errors = page.field_errors()
    assert set(errors) == set(LABELS[business_id]) - OPTIONAL
    assert errors["name"] == "请填写姓名" and errors["id_type"] == "请选择证件类型"
    assert errors["agree"] == "请勾选承诺书"
    assert page.alert().startswith(f"提交未成功，请修改以下{len(errors)}处问题：")
    assert "姓名：请填写姓名" in page.alert()
    assert page.url == url and applications() == []


@pytest.mark.parametrize("business_id", sorted(LABELS))
def test_a_valid_post_succeeds_once(portal, start, post, applications, business_id):
    url = start(business_id)
    page = post(url, VALID[business_id])
    assert page.status == 200 and page.text("h1") == ["提交成功"]
    assert page.application_no and page.url == url
    [application] = applications()
    assert application["application_no"] == page.application_no
    assert application["business_id"] == business_id
    assert application["draft_id"] == url.rsplit("/", 1)[1]
    assert application["values"]["id_number"] == VALID[business_id]["id_number"]
    assert application["values"]["agree"] is True


def test_field_errors_keep_the_values(start, post):
    data = {**VALID["social_transfer"], "name": "李四", "id_type": "护照",
            "from_city": "拉萨市", "remarks": "工作调动"}
    page = post(start("social_transfer"), data)
    assert page.field_errors() == {"name": "姓名与身份证号不一致", "id_type": "证件类型不存在",
                                   "from_city": "该城市暂未开通线上转移"}
    assert page.by_id("name")["attrs"]["value"] == "李四"
    assert page.by_id("id_number")["attrs"]["value"] == "330122196303150178"
    assert page.by_id("remarks")["text"] == "工作调动"
    assert "checked" in page.by_id("agree")["attrs"]
    selected = [e["attrs"]["value"] for e in page.elements
                if e["tag"] == "option" and "selected" in e["attrs"]]
    assert selected == ["拉萨市", "苏州市"]  # 护照 is no option: the select shows 请选择
    for message in ("证件类型不存在", "该城市暂未开通线上转移", "姓名与身份证号不一致"):
        assert message in page.alert()


@pytest.mark.parametrize(("business_id", "changes", "errors"), [
    ("social_transfer", {"id_number": "330122196303150179"}, {"id_number": "身份证号码格式不正确"}),
    ("social_transfer", {"id_number": "12345"}, {"id_number": "身份证号码格式不正确"}),
    ("social_transfer", {"to_city": "西宁市"}, {"to_city": "该城市暂未开通线上转移"}),
    ("social_transfer", {"to_city": "杭州市"}, {"to_city": "转入地不能与转出地相同"}),
    ("social_transfer", {"from_city": "火星市"}, {"from_city": "请从列表中选择转出地"}),
    ("card_apply", {"phone": "1380013800"}, {"phone": "手机号码格式不正确"}),
    ("card_apply", {"mailing_address": "杭州"}, {"mailing_address": "邮寄地址应为5到100个字"}),
    ("card_apply", {"bank": ""}, {"bank": "请选择合作银行"}),
    ("card_apply", {"name": "张伟"}, {"name": "姓名与身份证号不一致"}),
    ("medical_filing", {"destination_city": "火星"}, {"destination_city": "未找到该城市，请填写地级市名称"}),
    ("medical_filing", {"destination_city": "上海"},
     {"destination_city": "就医城市不能与参保城市相同，在参保地就医无需备案"}),
    ("medical_filing", {"filing_type": ""}, {"filing_type": "请选择备案类型"}),
    ("medical_filing", {"start_date": "2026/01/01"},
     {"start_date": "备案开始日期格式不正确，请按年-月-日填写"}),
    ("medical_filing", {"agree": ""}, {"agree": "请勾选承诺书"}),
])
def test_field_errors(start, post, applications, business_id, changes, errors):
    page = post(start(business_id), {**VALID[business_id], **changes})
    assert page.field_errors() == errors
    assert applications() == []


def test_a_radio_group_error_marks_every_radio(start, post):
    page = post(start("medical_filing"), {**VALID["medical_filing"], "filing_type": ""})
    radios = [e for e in page.elements if e["attrs"].get("name") == "filing_type"]
    assert len(radios) == 4
    assert all(r["attrs"]["aria-describedby"] == "filing_type-error" for r in radios)
    assert page.by_id("filing_type")["tag"] == "fieldset"


def test_values_are_stored_normalised(start, post, applications):
    post(start("medical_filing"), VALID["medical_filing"])
    values = applications()[0]["values"]
    assert values == {"name": "李秀英", "id_type": "居民身份证", "id_number": "310104196806120281",
                      "insured_city": "上海市", "destination_city": "杭州市",
                      "filing_type": "异地长期居住", "start_date": "2026-01-01",
                      "remarks": "随子女居住", "agree": True}


def test_unknown_business_and_draft(portal, start):
    assert portal.get("/forms/pension_query").status_code == 404
    page = Page(portal.get("/forms/card_apply/drafts/nope"))
    assert page.status == 404 and page.text("h1") == ["您访问的页面不存在"]
    url = start("card_apply")
    assert portal.get(url.replace("card_apply", "social_transfer")).status_code == 404
