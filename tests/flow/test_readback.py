"""Long numbers from a spoken message are read back before they are stored: yes
stores them, no asks again, a wrong one is asked again at once; typed ones are
stored as before."""

from __future__ import annotations

import pytest

ID = "330122196303150178"  # demo person 张伟
PHONE = "13800138000"


@pytest.fixture
def controller(make_controller):
    return make_controller()


def stored(turn) -> dict[str, str]:
    return {f.key: f.value for f in turn.fields if f.value}


def start(controller, user="u"):
    controller.handle(user, "我要办理社保卡申领")
    controller.handle(user, "张伟", spoken=True)


def test_spoken_id_is_read_back_then_stored_on_yes(controller):
    start(controller)
    heard = controller.handle("u", f"我的身份证号是{ID}", spoken=True)
    assert heard.reply == "您说的身份证号后四位是0178，对吗？请回答“对”或“不对”。"
    assert heard.awaiting == "id_number" and "id_number" not in stored(heard)
    yes = controller.handle("u", "对", spoken=True)
    assert stored(yes)["id_number"] == "3301**********0178"
    assert yes.reply.startswith("已记录：身份证号 3301**********0178。")
    assert yes.awaiting == "phone"
    session = controller.store.load("u")
    assert session.fields["id_number"].value == ID and session.heard == {}


def test_no_asks_again_and_stores_nothing(controller):
    start(controller)
    controller.handle("u", f"身份证号{ID}", spoken=True)
    no = controller.handle("u", "不对", spoken=True)
    assert no.reply == "好的，请再说一遍或直接输入身份证号。"
    assert no.awaiting == "id_number" and "id_number" not in stored(no)
    again = controller.handle("u", ID, spoken=True)  # heard again: read back again
    assert "后四位是0178" in again.reply and "id_number" not in stored(again)
    assert "id_number" in stored(controller.handle("u", "是的"))


def test_a_number_that_does_not_validate_is_asked_again_without_read_back(controller):
    start(controller)
    dropped = controller.handle("u", "身份证号33012219630315017", spoken=True)  # a digit lost
    assert "对吗" not in dropped.reply and "身份证" in dropped.reply
    assert dropped.awaiting == "id_number" and controller.store.load("u").heard == {}


def test_typed_numbers_are_stored_at_once(controller):
    start(controller)
    typed = controller.handle("u", f"身份证号{ID}")
    assert "对吗" not in typed.reply and "id_number" in stored(typed)


def test_two_numbers_in_one_message_are_read_back_together(controller):
    start(controller)
    heard = controller.handle("u", f"身份证号{ID}，手机号{PHONE}", spoken=True)
    assert heard.reply == ("您说的身份证号后四位是0178，手机号码后四位是8000，对吗？"
                           "请回答“对”或“不对”。")
    yes = controller.handle("u", "对的", spoken=True)
    assert {"id_number", "phone"} <= set(stored(yes)) and yes.awaiting == "bank"


def test_something_else_drops_the_read_back_and_is_handled(controller):
    start(controller)
    controller.handle("u", f"身份证号{ID}", spoken=True)
    other = controller.handle("u", "身份证号330122196303150178", spoken=False)
    assert "id_number" in stored(other) and controller.store.load("u").heard == {}


def test_a_change_at_confirmation_is_read_back_too(controller):
    start(controller)
    for text in (f"身份证号{ID}", "对", PHONE, "对", "工行", "浙江省杭州市西湖区文三路1号"):
        last = controller.handle("u", text, spoken=True)
    assert last.state == "confirming"
    change = controller.handle("u", "手机号改成13900139000", spoken=True)
    # The old number is the one called wrong: it is not kept while the new one is checked.
    assert "手机号码后四位是9000" in change.reply and "phone" not in stored(change)
    back = controller.handle("u", "对", spoken=True)
    assert stored(back)["phone"] == "139****9000" and back.state == "confirming"


def test_a_yes_or_no_said_several_times_settles_the_read_back(controller):
    start(controller)
    controller.handle("u", f"身份证号{ID}", spoken=True)
    assert controller.handle("u", "不对不对不对", spoken=True).awaiting == "id_number"
    controller.handle("u", f"身份证号{ID}", spoken=True)
    yes = controller.handle("u", "对对对", spoken=True)
    assert stored(yes)["id_number"] == "3301**********0178" and yes.awaiting == "phone"
