"""Recognition words and redaction: the cases a code review found."""

from __future__ import annotations

import pytest

from si_agent.engine import lexicon as L
from si_agent.privacy import Redactor, redact_text


@pytest.mark.parametrize("text", [
    "取消", "不办了", "算了吧", "我再想想，先取消吧", "我不会上传照片，算了", "不查了",
    "算了不办了", "不办了，谢谢", "放弃办理",
])
def test_cancel_phrases(text):
    assert L.is_cancel(text)


@pytest.mark.parametrize("text", [
    "我算了一下，退休年龄是60岁", "旧社保卡不要了，帮我挂失", "上个月公司倒闭了，工作不用了",
    "取消以后能恢复吗？", "不要取消", "提交以后多久能拿到卡？",
])
def test_not_cancel(text):
    assert not L.is_cancel(text)


@pytest.mark.parametrize("text,confirm", [
    ("确认", True), ("确认提交", True), ("好的", True), ("提交以后多久能拿到卡？", False),
    ("提交前我想再看一下", False), ("不确认", False),
])
def test_confirm(text, confirm):
    assert L.is_confirm(text) is confirm


@pytest.mark.parametrize("text", [
    "我的身份证号是 3301 2219 6303 1501 78",     # typed in groups
    "身份证330122196303150179",                  # a wrong check digit
    "卡号 6222 0212 3456 7890 123",              # a card failing Luhn
    "手机138-1234-5678",
    "我的身份证33012219630315017X能查养老金吗",   # an X ID with a wrong check character
])
def test_numbers_never_leave_unmasked(text):
    digits = "".join(c for c in text if c.isdigit())
    redacted = Redactor().redact(text)
    assert not any(ch.isdigit() for ch in redacted.split("<")[0][-3:])
    assert digits not in "".join(c for c in redacted if c.isdigit())
    assert digits not in "".join(c for c in redact_text(text) if c.isdigit())


def test_placeholders_round_trip_and_show_masked():
    r = Redactor()
    text = r.redact("身份证330122196303150178，手机13812345678，再说一遍330122196303150178")
    assert text == "身份证<ID_1>，手机<PHONE_1>，再说一遍<ID_1>"
    assert r.restore({"values": {"id_number": "<ID_1>"}}) == {
        "values": {"id_number": "330122196303150178"}}
    assert r.restore_masked("<ID_1>/<PHONE_1>") == "3301**********0178/138****5678"


@pytest.mark.parametrize(("text", "shown"), [
    ("我的身份证号是 三三零 一二二 嗯 一九六三 零三一五 零一七八", "我的身份证号是 3301**********0178"),
    ("三三零一零六一九九零零一零一一二三叉", "3301**********123X"),  # the spoken X
    ("３２０１０２一九八八０９１５０６２８", "3201**********0628"),  # full-width and spoken
    ("新号码幺三九 五七七七 幺二三四", "新号码139****1234"),
])
def test_numbers_said_digit_by_digit_are_masked_as_read(text, shown):
    assert redact_text(text) == shown


@pytest.mark.parametrize(("text", "shown"), [
    ("消息一 13812345678", "消息一 138****5678"),  # a spoken digit just before a phone
    ("第三 13812345678", "第三 138****5678"),
    ("身份证33012219630315017X", "身份证3301****017X"),  # the check character stays
])
def test_numbers_the_scan_in_context_missed_are_masked_by_their_kind(text, shown):
    assert redact_text(text) == shown


def test_personal_spans_are_remembered_per_day(monkeypatch):
    """The scan is remembered by text and date: an ID number whose birth date is
    tomorrow is a long number today and an ID number from tomorrow on."""
    from datetime import date, timedelta

    import si_agent.privacy as privacy
    from si_agent.validators import check
    from tests.validators.validators_support import make_id

    today = date.today()
    tomorrow = today + timedelta(days=1)
    # Not a number that also passes a bank card's check digit (one in ten would, by
    # chance, on some days: then it is masked as a card, and the test would say nothing).
    number = next(n for n in (make_id(birth=tomorrow.strftime("%Y%m%d"), seq=f"{s:03d}")
                              for s in range(100)) if not check("bank_card", n).ok)
    text = f"我的身份证号是{number}"
    assert [kind for *_, kind, _ in privacy.personal_spans(text)] == ["number"]

    class Tomorrow(date):
        @classmethod
        def today(cls):
            return tomorrow

    monkeypatch.setattr(privacy, "date", Tomorrow)
    assert [kind for *_, kind, _ in privacy.personal_spans(text)] == ["idcard"]
    assert privacy.personal_spans(text) is privacy.personal_spans(text)  # remembered
