"""The rpa executor stays on its portal: a hostile portal on loopback (tests/rpa/hostile.py)
redirects to a foreign site after login or after the submission, posts its form
there, sends the browser to a foreign login page, leaks the form data with fetch,
and shows a fake 受理编号 there. Real Chromium, the real executor, a real dialogue.

Each time the foreign site gets no request at all (so neither the citizen's data
nor the portal password), no fake number is accepted, the job fails with the
reason in its trace, and the citizen is told the site could not be reached
safely, never that the application was accepted.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from si_agent.app import build_controller
from si_agent.config.settings import Settings
from si_agent.executor import Executors, texts
from tests.rpa.conftest import settle, talk
from tests.rpa.hostile import (
    BUSINESS_YAML,
    FAKE_NO,
    PASSWORD,
    REAL_NO,
    USER,
    Foreign,
    Portal,
    running_sites,
)

NAME, ID_NUMBER = "张伟", "330122196303150178"


@pytest.fixture(scope="module")
def sites(chromium) -> Iterator[tuple[Portal, Foreign]]:
    with running_sites() as both:
        yield both


@pytest.fixture
def hostile(sites, tmp_path, chromium, monkeypatch) -> Iterator[tuple[Portal, Foreign, object, Settings]]:
    portal, foreign = sites
    for site in sites:
        site.requests.clear()
    portal.applications.clear()
    portal.scenario = ""
    monkeypatch.setenv("HOSTILE_USER", USER)
    monkeypatch.setenv("HOSTILE_PASSWORD", PASSWORD)
    businesses = tmp_path / "businesses"
    businesses.mkdir()
    (businesses / "hostile_test.yaml").write_text(BUSINESS_YAML.format(portal=portal.url),
                                                  "utf-8")
    settings = Settings(business_dir=businesses, data_dir=tmp_path / "data",
                        session_store="memory", knowledge="none", rpa_chromium=chromium)
    ctl = build_controller(settings, engine="rules")
    try:
        yield portal, foreign, ctl, settings
    finally:
        ctl.runner.shutdown()


def _apply(ctl) -> object:
    turn = talk(ctl, "我要办理测试业务", NAME, ID_NUMBER)
    assert turn.state == "confirming", turn.reply
    assert talk(ctl, "确认").state == "executing"
    return settle(ctl)


def _trace(settings) -> str:
    root = settings.data_dir / "rpa"
    return "\n".join(p.read_text("utf-8") for p in root.glob("*/actions.log"))


def _told_unsafe(turn, *, submitted: bool) -> None:
    said = turn.notice or ""
    assert (texts.RPA_UNSAFE_SUBMITTED if submitted else texts.RPA_UNSAFE_SITE) in said, said
    assert "已受理" not in said and FAKE_NO not in said and "受理编号：" not in said
    assert turn.state != "done" and not turn.result


def test_a_well_behaved_portal_still_works(hostile):
    portal, foreign, ctl, settings = hostile
    turn = _apply(ctl)
    assert turn.state == "done", turn.notice
    assert turn.result["application_no"] == REAL_NO
    assert portal.applications == [{"name": NAME, "id_number": ID_NUMBER}]
    assert foreign.requests == []


@pytest.mark.parametrize("scenario", ["login_redirect", "foreign_login", "cross_action"])
def test_nothing_leaves_the_portal_before_the_submission(hostile, scenario):
    portal, foreign, ctl, settings = hostile
    portal.scenario = scenario
    turn = _apply(ctl)
    assert foreign.requests == [], [(r.method, r.path) for r in foreign.requests]
    assert portal.applications == []
    _told_unsafe(turn, submitted=False)
    assert f"blocked POST {foreign.url}" in _trace(settings) or \
        f"blocked GET {foreign.url}" in _trace(settings) or "off the portal" in _trace(settings)


@pytest.mark.parametrize("scenario", ["submit_redirect", "script_redirect"])
def test_a_fake_number_on_a_foreign_page_is_not_taken(hostile, scenario):
    portal, foreign, ctl, settings = hostile
    portal.scenario = scenario
    turn = _apply(ctl)
    assert foreign.requests == [], [(r.method, r.path) for r in foreign.requests]
    # The submission reached the portal: whether it was accepted is not known.
    assert portal.applications == [{"name": NAME, "id_number": ID_NUMBER}]
    _told_unsafe(turn, submitted=True)
    assert f"blocked GET {foreign.url}/done" in _trace(settings)


@pytest.mark.parametrize(("scenario", "blocked"), [
    ("fetch_leak", "blocked POST {foreign}/collect"),
    ("socket_leak", "blocked GET ws{socket}/ws [websocket]")])
def test_form_data_sent_elsewhere_by_a_script_is_stopped(hostile, scenario, blocked):
    portal, foreign, ctl, settings = hostile
    portal.scenario = scenario
    turn = _apply(ctl)
    assert foreign.requests == [], [(r.method, r.path) for r in foreign.requests]
    # The leak shows while the form is filled: the executor stops before submitting.
    assert portal.applications == []
    _told_unsafe(turn, submitted=False)
    assert blocked.format(foreign=foreign.url, socket=foreign.url.removeprefix("http")) \
        in _trace(settings)


def test_no_password_is_typed_on_a_page_that_only_shares_the_login_path(hostile, tmp_path):
    """The login page is known by origin and path: a foreign site's /login (allowed
    for its pages) is not the portal's login page."""
    portal, foreign, ctl, settings = hostile
    portal.scenario = "foreign_login"
    yaml_path = settings.business_dir / "hostile_test.yaml"
    text = yaml_path.read_text("utf-8").replace(
        "    action_timeout: 8\n", f"    action_timeout: 8\n    allowed_origins: [{foreign.url}]\n")
    yaml_path.write_text(text, "utf-8")
    ctl = build_controller(settings, engine="rules")
    try:
        turn = _apply(ctl)
    finally:
        ctl.runner.shutdown()
    assert not any(PASSWORD in r.text() for r in foreign.requests)
    assert not any(NAME in r.text() or ID_NUMBER in r.text() for r in foreign.requests)
    assert portal.applications == [] and turn.state != "done"
    assert "已受理" not in (turn.notice or "") and not turn.result, turn.notice


def test_a_saved_draft_off_the_portal_is_not_resumed(hostile):
    from si_agent.executor import JobContext
    from si_agent.executor.rpa import RpaExecutor

    portal, foreign, ctl, settings = hostile
    business = ctl.catalog["hostile_test"]
    executor = RpaExecutor(settings.data_dir / "rpa2", chromium=str(settings.rpa_chromium))
    options = Executors(settings).options(business)
    from si_agent.errors import ExecutorError

    with pytest.raises(ExecutorError) as caught:
        executor.run(business, {"name": NAME, "id_number": ID_NUMBER}, idempotency_key="k" * 32,
                     options=options, job=JobContext(id="j1", resume={
                         "draft": f"{foreign.url}/form"}))
    assert caught.value.message == texts.RPA_UNSAFE_SUBMITTED and not caught.value.retryable
    assert foreign.requests == [] and portal.applications == []
    executor.close()

