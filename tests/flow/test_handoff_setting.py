"""The contact citizens are sent to for a person is the controller's ``handoff_text``
(SI_HANDOFF_TEXT) in every reply of a turn, not the default hotline."""

from __future__ import annotations

LOCAL = "市民服务热线12345"


def test_an_unanswered_question_names_the_configured_contact(make_controller):
    ctl = make_controller(handoff_text=LOCAL)
    reply = ctl.handle("s1", "火星上的房价怎么样？").reply
    assert "暂时无法回答" in reply and LOCAL in reply and "12333" not in reply


def test_repeated_invalid_values_name_the_configured_contact(make_controller):
    ctl = make_controller(handoff_text=LOCAL)
    ctl.handle("s2", "我的社保卡丢了，要挂失")
    replies = [ctl.handle("s2", "33012219630315017" + d).reply for d in "123"]
    assert LOCAL in replies[-1] and "12333" not in replies[-1]
