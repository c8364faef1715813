"""The rules by which labels, options, buttons and typed values are matched (issue 30),
on their own: ``si_agent.labels`` and ``si_agent.form_values``."""

from __future__ import annotations

import pytest

from si_agent.form_values import as_list, typed
from si_agent.labels import (
    Button,
    Rule,
    assign,
    best_option,
    button_meaning,
    fold,
    normalize,
    repeats,
)


def test_labels_fold_case_width_punctuation_and_required_marks():
    assert normalize("申请人姓名（必填）") == "申请人姓名" and normalize("姓　名 *：") == "姓名"
    assert fold("Date of Birth *") == fold("date of birth") == "dateofbirth"
    assert fold("E-mail (required)") == "email"


@pytest.mark.parametrize(("label", "name", "rule"), [
    ("Date of Birth", "Date of birth", Rule.EXACT),
    ("申请人姓名（必填）", "申请人姓名", Rule.EXACT),
    ("Email Address", "email", Rule.SYNONYM),
    ("Contact email address", "email", Rule.CONTAINS),
    ("申请人姓名（必填）", "姓名", Rule.CONTAINS),
    ("Date of birth", "birth date", Rule.SYNONYM),
    ("失业时间", "失业日期", Rule.SYNONYM),  # words of one meaning (data/label_words.yaml)
    ("经办人电话", "经办人手机号", Rule.SYNONYM),
    ("Forename(s)", "First name", Rule.SYNONYM),
    ("Social Security Number (optional)", "SSN", Rule.SYNONYM),  # an acronym, a qualifier
    ("事故发生时间", "事故时间", Rule.WORDS),  # every word, in order
    ("Date you moved", "Moving date", Rule.WORDS),
    ("Were you able and available for work?", "Able and available for work", Rule.CONTAINS),
    ("Home adress", "Home address", Rule.TOKENS),
    ("Application for a", "Application type", Rule.WORDS),  # content words decide the shorter
    ("5. Place of birth", "Place of birth", Rule.SYNONYM),  # a question's number left out
    ("所属街道（乡镇）", "所在街道", Rule.SYNONYM),
    ("房屋地址", "居住地址", Rule.SYNONYM),
    ("What type of accommodation do you live in?", "Housing type", Rule.WORDS),
])
def test_how_a_label_fits(label, name, rule):
    found = assign({"k": [name]}, ["Something else", label])
    assert found.matches["k"].rule == rule and found.matches["k"].index == 1


@pytest.mark.parametrize(("label", "name"), [
    ("Username", "name"),  # not a whole word
    ("转入地", "转出地"), ("End date", "Start date"), ("市", "苏州市"),
    ("Date of trip", "Departure date"), ("Contact name", "Contact phone"),
])
def test_labels_that_do_not_fit(label, name):
    assert assign({"k": [name]}, [label]).matches == {}


def test_two_controls_that_fit_alike_take_neither_and_exact_wins():
    found = assign({"phone": ["Phone"]}, ["Home phone", "Work phone"])
    assert found.matches == {} and found.ambiguous == {"phone": [0, 1]}
    assert found.notes(["Home phone", "Work phone"]) == [
        "ambiguous: phone fits 'Home phone' and 'Work phone'"]
    found = assign({"phone": ["联系电话"], "name": ["姓名"]},
                   ["紧急联系人电话", "联系电话", "姓名", "紧急联系人姓名"])
    assert {k: m.index for k, m in found.matches.items()} == {"phone": 1, "name": 2}


def test_options_by_value_wording_and_containment():
    shifts = ["Morning (9:00 AM - 12:00 PM)", "Evening (6:00 PM - 9:00 PM)"]
    assert best_option(shifts, "evening") == shifts[1]
    assert best_option(["Half a year", "One year"], "6 months", ["6 months", "12 months"]) \
        == "Half a year"
    assert best_option(["中国工商银行", "中国建设银行"], "工商银行") == "中国工商银行"
    assert best_option(["Morning", "Evening"], "night") is None
    assert best_option(["中国工商银行", "中国建设银行"], "银行") is None  # generic
    opt_out = ["Opt out of calls", "Opt out of texts", "Opt out of paper mail"]
    assert best_option(opt_out, "paper mail") == opt_out[2]
    assert best_option(["First Social Insurance Number card", "Replacement card"],
                       "first SIN") == "First Social Insurance Number card"
    assert best_option(opt_out, "Opt out") is None  # all three


@pytest.mark.parametrize(("name", "meaning"), [
    ("下一步", Button.NEXT), ("Continue →", Button.NEXT), ("Next", Button.NEXT),
    ("提 交", Button.SUBMIT), ("确认提交", Button.SUBMIT), ("Submit Application", Button.SUBMIT),
    ("Apply", Button.SUBMIT), ("Send", Button.SUBMIT), ("Register", Button.SUBMIT),
    ("Cancel", None), ("登录", None), ("Weiter", None),
])
def test_what_a_button_means(name, meaning):
    assert button_meaning(name) == meaning


def test_named_buttons_come_first():
    assert button_meaning("Weiter", next_names=["Weiter"]) == Button.NEXT
    assert button_meaning("Fertig", submit_names=["Fertig"]) == Button.SUBMIT


@pytest.mark.parametrize(("kind", "value", "typed_value"), [
    ("date", "2025/03/01", "2025-03-01"), ("date", "2025年3月1日", "2025-03-01"),
    ("date", "20250301", "2025-03-01"), ("date", "not a date", None),
    ("time", "9:30", "09:30"), ("time", "下午3点", "15:00"), ("time", "14点半", "14:30"),
    ("month", "2025年3月", "2025-03"), ("month", "2025/03", "2025-03"),
    ("datetime-local", "2025年3月1日 9:30", "2025-03-01T09:30"),
    ("number", "1,200元", "1200"), ("number", "3 years", "3"), ("number", "三", None),
    ("text", "2025/03/01", "2025/03/01"),
])
def test_values_typed_as_their_input_takes_them(kind, value, typed_value):
    assert typed(kind, value) == typed_value


def test_list_values():
    assert as_list("Reading、Music") == as_list(["Reading", "Music"]) == ["Reading", "Music"]
    assert as_list("英语, 法语；德语") == ["英语", "法语", "德语"]


def test_chinese_short_options_and_bracketed_qualifiers():
    reasons = ["购买自住住房", "偿还住房贷款本息", "租赁自住住房", "离职提取"]
    assert best_option(reasons, "租房") == "租赁自住住房"  # its characters, in order
    assert best_option(reasons, "还贷") == "偿还住房贷款本息"
    assert best_option(reasons, "住房") is None  # in two options: neither
    assert best_option(["劳动（聘用）合同期满终止", "协商一致解除"], "劳动合同期满终止") \
        == "劳动（聘用）合同期满终止"
    assert best_option(["务工", "经商", "在校学生"], "上学") is None


def test_a_control_asking_again_takes_the_same_value():
    labels = ["Email address", "Confirm email address", "Phone", "Confirm"]
    assert repeats(labels, {0: "email", 2: "phone"}) == {1: "email"}
    assert repeats(["电子邮箱", "确认邮箱"], {0: "email"}) == {1: "email"}
    assert repeats(["Email address", "Confirm email address"], {}) == {}
