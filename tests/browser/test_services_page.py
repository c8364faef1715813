"""Services and answers to tap: the greeting has a button per business offered (again
after a reload), "有哪些业务" lists them as buttons in idle and mid-flow, an enum field's
options and 确认/修改/取消 are quick replies; a tap sends its text as the message."""

from __future__ import annotations

import pytest

from tests.browser.test_chat_page import (
    PHONE,
    ZHANG_WEI_ID,
    _await_reply,
    click,
    expect_field,
    last_user_text,
    say,
)

try:
    from playwright.sync_api import expect
except ImportError:  # the fixtures skip (or fail under SI_REQUIRE_BROWSER) without it
    expect = None

pytestmark = pytest.mark.browser


def test_the_services_are_buttons_that_start_a_business(open_page):
    page = open_page()
    reply = say(page, "有哪些业务可以办")
    assert "社保卡挂失" in reply and "养老金查询" in reply
    services = page.get_by_test_id("services")
    expect(services).to_be_visible()
    services.get_by_role("button", name="社保卡挂失").click()
    expect(page.get_by_test_id("business-name")).to_have_text("社保卡挂失")
    expect(services).to_be_hidden()

    reply = say(page, "你们还能办些啥")
    assert "社保卡申领" in reply
    expect(services).to_be_visible()
    expect(page.get_by_test_id("business-name")).to_have_text("社保卡挂失")

    page.reload()  # the last reply's buttons come back with it
    page.wait_for_selector("[data-testid=app][data-ready=true]")
    expect(services.get_by_role("button", name="社保卡申领")).to_be_visible()
    say(page, ZHANG_WEI_ID)  # the next reply lists nothing: no buttons
    expect(services).to_be_hidden()


def test_the_greeting_offers_every_service_as_a_button(open_page, live_server):
    page = open_page()
    offered = [b["name"] for b in page.request.get(live_server + "/api/businesses").json()
               if b["online"]]
    greeting = page.get_by_test_id("greeting-services")
    expect(greeting.get_by_role("button")).to_have_text(offered)  # all, in catalog order
    assert len(offered) > 4
    expect(page.get_by_test_id("message-assistant").first).to_contain_text("可以点选下面的业务")

    page.reload()  # greeted again, the buttons with it
    page.wait_for_selector("[data-testid=app][data-ready=true]")
    expect(greeting.get_by_role("button")).to_have_text(offered)
    _await_reply(page, greeting.get_by_role("button", name="养老金查询").click)
    expect(last_user_text(page)).to_have_text("养老金查询")
    expect(page.get_by_test_id("business-name")).to_have_text("养老金查询")

    # "你好" typed: the greeting again, every service under it as buttons.
    say(page, "取消")
    say(page, "你好")
    expect(page.get_by_test_id("services").get_by_role("button")).to_have_text(offered)


@pytest.mark.parametrize("viewport", [{"width": 1280, "height": 800}, PHONE],
                         ids=["1280px", "390px"])
def test_choices_and_confirming_are_quick_replies(open_page, artifacts, viewport):
    page = open_page(viewport)
    choices = page.get_by_test_id("choices")
    say(page, "社保卡丢了")
    expect(choices).to_be_hidden()  # an ID number is typed, not chosen
    say(page, ZHANG_WEI_ID)
    say(page, "张伟")
    say(page, "13812345678")
    expect(choices.get_by_role("button")).to_have_text(["临时挂失", "正式挂失"])
    page.screenshot(path=artifacts / f"choices-{viewport['width']}-enum.png")

    page.reload()  # the options come back with the field still awaited
    page.wait_for_selector("[data-testid=app][data-ready=true]")
    expect(choices.get_by_role("button")).to_have_text(["临时挂失", "正式挂失"])
    _await_reply(page, choices.get_by_role("button", name="正式挂失").click)
    expect(last_user_text(page)).to_have_text("正式挂失")
    expect_field(page, "loss_type", "collected", "正式挂失")
    expect(page.get_by_test_id("state-badge")).to_have_text("待确认")
    expect(choices).to_be_hidden()
    for testid in ("confirm", "modify", "cancel"):
        expect(page.get_by_test_id(testid)).to_be_visible()

    # 修改: which item, as buttons; the one tapped is sent, and its options come back.
    page.get_by_test_id("modify").click()
    expect(choices.get_by_role("button")).to_have_text(
        ["修改身份证号", "修改姓名", "修改手机号码", "修改挂失方式"])
    page.screenshot(path=artifacts / f"choices-{viewport['width']}-modify.png")
    _await_reply(page, choices.get_by_role("button", name="修改挂失方式").click)
    expect(last_user_text(page)).to_have_text("修改挂失方式")
    expect(page.get_by_test_id("message-input")).to_have_value("")
    expect(page.get_by_test_id("state-badge")).to_have_text("信息收集中")
    _await_reply(page, choices.get_by_role("button", name="临时挂失").click)
    expect_field(page, "loss_type", "collected", "临时挂失")

    reply = click(page, "confirm")
    assert "受理编号" in reply
    expect(last_user_text(page)).to_have_text("确认")
    expect(page.get_by_test_id("state-badge")).to_have_text("已完成")
    expect(choices).to_be_hidden()


def test_typed_start_over_asks_with_quick_replies(open_page):
    page = open_page()
    choices = page.get_by_test_id("choices")
    say(page, "社保卡丢了")
    say(page, ZHANG_WEI_ID)
    reply = say(page, "重新开始")
    assert "确定要重新开始吗" in reply
    expect(choices.get_by_role("button")).to_have_text(["确定", "继续"])
    expect_field(page, "id_number", "collected")  # nothing wiped before the answer
    _await_reply(page, choices.get_by_role("button", name="继续").click)
    expect_field(page, "id_number", "collected")
    expect(page.get_by_test_id("state-badge")).to_have_text("信息收集中")
    expect(choices).to_be_hidden()

    say(page, "重新开始")
    _await_reply(page, choices.get_by_role("button", name="确定").click)
    expect(page.get_by_test_id("state-badge")).to_have_text("空闲")
    expect(page.get_by_test_id("business-name")).to_have_text("暂无")
    expect(page.get_by_test_id("services").get_by_role("button").first).to_be_visible()
