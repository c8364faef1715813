"""The browser agent stays on its origins: on the hostile portal of tests/rpa/hostile.py
(real servers on loopback, real Chromium), with ``origins`` set, the agent never
clicks a submit button posting to the foreign site, stops when the page is sent
there, and takes no number from it; the foreign site gets no request."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from si_agent.agent import Agent, DomPerception, FormPolicy, Goal
from si_agent.origins import OriginPolicy
from tests.rpa.hostile import FAKE_NO, PASSWORD, REAL_NO, USER, Foreign, Portal, running_sites

pytestmark = pytest.mark.browser

NAME, ID_NUMBER = "张伟", "330122196303150178"
GOAL = Goal(task="在办理网站上填写并提交【测试业务】",
            values={"name": NAME, "id_number": ID_NUMBER},
            labels={"name": ["姓名"], "id_number": ["身份证号"]})


@pytest.fixture(scope="module")
def sites(chromium) -> Iterator[tuple[Portal, Foreign]]:  # noqa: F811
    with running_sites() as both:
        yield both


@pytest.fixture
def form_page(playwright_driver, chromium, sites) -> Iterator[Any]:  # noqa: F811
    """A fresh browser logged in to the hostile portal, on its form."""
    portal, foreign = sites
    browser = playwright_driver.chromium.launch(executable_path=chromium)
    try:
        page = browser.new_context(locale="zh-CN").new_page()
        page.set_default_timeout(15_000)
        page.goto(portal.url + "/login")
        page.fill("#user", USER)
        page.fill("#pw", PASSWORD)
        with page.expect_navigation():
            page.click("button")
        for site in sites:
            site.requests.clear()
        portal.applications.clear()
        yield page
    finally:
        portal.scenario = ""
        browser.close()


def _run(page: Any, portal: Portal, tmp_path) -> Any:
    page.goto(portal.url + "/form")
    agent = Agent(DomPerception(), FormPolicy(), max_steps=12,
                  origins=OriginPolicy([portal.url]))
    return agent.run(page, GOAL, trace_dir=tmp_path / "agent")


def test_the_agent_finishes_on_a_well_behaved_portal(form_page, sites, tmp_path):
    portal, foreign = sites
    result = _run(form_page, portal, tmp_path)
    assert result.success and result.output["application_no"] == REAL_NO, result.message
    assert portal.applications == [{"name": NAME, "id_number": ID_NUMBER}]
    assert foreign.requests == []


def test_the_agent_does_not_submit_a_form_posting_elsewhere(form_page, sites, tmp_path):
    portal, foreign = sites
    portal.scenario = "cross_action"
    result = _run(form_page, portal, tmp_path)
    assert not result.success and result.off_portal and foreign.url in result.off_portal
    assert foreign.requests == [] and portal.applications == []


def test_the_agent_takes_no_number_from_a_foreign_page(form_page, sites, tmp_path):
    portal, foreign = sites
    portal.scenario = "submit_redirect"
    result = _run(form_page, portal, tmp_path)
    assert not result.success and result.unknown and result.off_portal
    assert FAKE_NO not in str(result.output) and foreign.requests == []
    assert portal.applications == [{"name": NAME, "id_number": ID_NUMBER}]
