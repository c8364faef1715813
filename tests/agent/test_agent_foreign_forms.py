"""The browser agent with the offline ``FormPolicy`` on forms in other styles than the
demo portal's (issue 30): the pages of ``tests/rpa/test_rpa_foreign_forms.py``, served
by the same recording server, in real Chromium. Perception reads labels from table
cells, placeholders and ``aria-*``, and radio and checkbox groups without a
fieldset; the policy matches labels by their meaning, types dates as their inputs
take them, picks options by value or wording, and finds Continue, Apply, 提 交 or a
form's lone submit button, or the ones the goal names."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from si_agent.agent import Agent, DomPerception, FormPolicy, Goal
from tests.rpa.conftest import chromium  # noqa: F401  (the fixture)
from tests.rpa.test_rpa_foreign_forms import (  # the pages and their server
    CHINESE_FIELDS,
    CHINESE_SENT,
    CHINESE_VALUES,
    ENGLISH_FIELDS,
    ENGLISH_SENT,
    ENGLISH_VALUES,
    SCRIPTED_FIELDS,
    WIZARD_FIELDS,
    site,  # noqa: F401  (the fixture)
)

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def browser(playwright_driver, chromium) -> Iterator[Any]:  # noqa: F811
    b = playwright_driver.chromium.launch(executable_path=chromium)
    yield b
    b.close()


@pytest.fixture
def page(browser) -> Iterator[Any]:
    page = browser.new_context(locale="zh-CN").new_page()
    page.set_default_timeout(10_000)
    yield page
    page.close()


def goal(fields: list[dict[str, Any]], values: dict[str, Any], **more: Any) -> Goal:
    return Goal(task="在线申请", values=values,
                labels={f["key"]: [f["label"]] for f in fields}, **more)


def names(view) -> dict[str, str]:
    return {e.name: e.group for e in view.elements if e.role not in ("button", "link")}


def test_perception_reads_cells_placeholders_aria_and_groups(site, page):  # noqa: F811
    base, _ = site
    page.goto(base + "/form/zh")
    seen = names(DomPerception().perceive(page))
    assert "申请人姓名" in seen and "公民身份号码：" in seen  # the cells beside, not their marks
    assert "请输入手机号码" in seen  # a placeholder alone
    assert "出生日期" in seen and "通讯地址" in seen  # aria-labelledby, aria-label
    assert seen["女"] == "性别"  # a radio group named by its row's first cell
    page.goto(base + "/form/en")
    seen = names(DomPerception().perceive(page))
    assert seen["Female"] == "Gender" and seen["Music"] == "Interests"  # no fieldsets


def test_the_policy_fills_an_english_form(site, page):  # noqa: F811
    base, received = site
    page.goto(base + "/form/en")
    result = Agent(DomPerception(), FormPolicy(), max_steps=40).run(
        page, goal(ENGLISH_FIELDS, ENGLISH_VALUES, must_place=list(ENGLISH_VALUES)))
    assert result.success, result.message
    assert result.output == {"application_no": "SI20261203000042"}
    assert received == [("en", ENGLISH_SENT)]
    assert result.unplaced == []


def test_the_policy_fills_a_chinese_table_form(site, page):  # noqa: F811
    base, received = site
    page.goto(base + "/form/zh")
    labels = {"name": ["姓名", "申请人姓名"], "id_number": ["身份证号", "公民身份号码"]}
    result = Agent(DomPerception(), FormPolicy()).run(page, Goal(
        task="在线申请", values=CHINESE_VALUES, must_place=list(CHINESE_VALUES),
        labels={f["key"]: [f["label"], *labels.get(f["key"], [])] for f in CHINESE_FIELDS}))
    assert result.success, result.message
    assert received == [("zh", CHINESE_SENT)]


def test_continue_a_lone_submit_and_buttons_the_goal_names(site, page):  # noqa: F811
    base, received = site
    values = {"email": "a@b.cn", "city": "Hangzhou"}
    page.goto(base + "/wizard/1")
    result = Agent(DomPerception(), FormPolicy()).run(page, goal(WIZARD_FIELDS, values))
    assert result.success, result.message
    page.goto(base + "/named/1")  # "Weiter": no usual word, and the form's lone submit
    result = Agent(DomPerception(), FormPolicy()).run(
        page, goal(WIZARD_FIELDS, values, next=["Weiter"], must_place=["city"]))
    assert result.success, result.message
    assert received == [("wizard", {"e": ["a@b.cn"], "c": ["Hangzhou"]})] * 2
    clicked = [r.target for r in result.steps if r.step.action.type == "click"]
    assert clicked == ["Weiter", "Go"]


def test_a_form_built_by_a_script(site, page):  # noqa: F811
    base, received = site
    page.goto(base + "/form/js")
    result = Agent(DomPerception(), FormPolicy()).run(
        page, goal(SCRIPTED_FIELDS, {"name": "Li Lei", "email": "li@x.cn"}))
    assert result.success, result.message
    assert received == [("js", {"who": ["Li Lei"], "mail": ["li@x.cn"]})]


def test_a_value_no_option_fits_and_two_controls_for_one_value(site, page):  # noqa: F811
    base, received = site
    page.goto(base + "/form/shifts")
    result = Agent(DomPerception(), FormPolicy()).run(page, Goal(
        task="x", values={"name": "Li", "shift": "night"},
        labels={"name": ["Name"], "shift": ["Shift"]}))
    assert not result.success and result.failed == {"shift": "网站上只能选择：Morning、Evening"}
    page.goto(base + "/form/phones")
    result = Agent(DomPerception(), FormPolicy()).run(page, Goal(
        task="x", values={"phone": "13800138001", "name": "Li"}, must_place=["phone"],
        labels={"phone": ["Phone"], "name": ["Name"]}))
    assert not result.success and result.unplaced == ["phone"]
    assert received == []
