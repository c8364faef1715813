"""Executors check their requirements at start-up: a web-form (rpa) business on a
machine without Playwright or without the browser is one clear warning line at
start and, for the citizen, "暂时无法在线办理" with where to go instead, never a
retry offer that cannot help; a portal that is down at start is a warning only."""

from __future__ import annotations

import logging
import sys
import time
from pathlib import Path

import pytest

from si_agent.app import build_controller
from si_agent.config.settings import Settings
from si_agent.errors import ExecutorError
from si_agent.executor.rpa import RpaExecutor
from si_agent.flow.controller import Controller

ROOT = Path(__file__).resolve().parents[2]
BUSINESSES = ROOT / "examples" / "portal" / "businesses"
RPA_BUSINESSES = {"card_apply", "medical_filing", "social_transfer", "unemployment_benefit"}
NOWHERE = "http://127.0.0.1:9"  # the discard port: nothing listens there


def settings(tmp_path: Path, chromium: str) -> Settings:
    return Settings(business_dir=BUSINESSES, data_dir=tmp_path, session_store="memory",
                    knowledge="none", rpa_chromium=chromium)


def start(tmp_path: Path, chromium: str, caplog, monkeypatch, *,
          credentials: bool = True) -> Controller:
    monkeypatch.setenv("SI_PORTAL_URL", NOWHERE)
    for name in ("SI_PORTAL_USER", "SI_PORTAL_PASSWORD"):
        if credentials:
            monkeypatch.setenv(name, "demo")
        else:
            monkeypatch.delenv(name, raising=False)
    with caplog.at_level(logging.WARNING):
        return build_controller(settings(tmp_path, chromium), engine="rules")


def warnings(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]


def test_no_browser_is_one_line_at_start_and_the_business_is_offline(
        tmp_path, caplog, monkeypatch):
    ctl = start(tmp_path, str(tmp_path / "no-chromium"), caplog, monkeypatch)
    [line] = [w for w in warnings(caplog) if "no-chromium" in w]
    assert "is not there" in line and "apt-get install chromium" in line
    assert "SI_RPA_CHROMIUM" in line and "social_transfer" in line
    assert set(ctl.unavailable) == RPA_BUSINESSES
    turn = ctl.handle("u", "我要把社保从杭州转到拉萨")
    assert turn.state == "idle"
    assert "【社保关系转移】暂时无法在线办理" in turn.reply and "窗口" in turn.reply
    assert "12333" in turn.reply and "重试" not in turn.reply


def test_no_playwright_is_named_with_the_fix(tmp_path, caplog, monkeypatch):
    monkeypatch.setitem(sys.modules, "playwright", None)  # as if not installed
    ctl = start(tmp_path, sys.executable, caplog, monkeypatch)
    [line] = [w for w in warnings(caplog) if "Playwright" in w]
    assert "Playwright is not installed" in line and "si_agent[rpa]" in line
    assert set(ctl.unavailable) == RPA_BUSINESSES


def test_no_portal_credentials_is_one_line_at_start_and_the_business_is_offline(
        tmp_path, caplog, monkeypatch):
    # docs/rpa.md's walk without SI_PORTAL_USER/SI_PORTAL_PASSWORD: the job used to
    # fail at the portal's login page after the citizen had given every value.
    pytest.importorskip("playwright")
    ctl = start(tmp_path, sys.executable, caplog, monkeypatch, credentials=False)
    [line] = [w for w in warnings(caplog) if "login" in w]
    assert line.startswith("the portal's login needs SI_PORTAL_USER and SI_PORTAL_PASSWORD; "
                           "those businesses are not available online (needed by ")
    assert "social_transfer" in line and "docs/rpa.md" in line
    assert set(ctl.unavailable) == RPA_BUSINESSES
    turn = ctl.handle("u", "我要把社保从杭州转到拉萨")
    assert turn.state == "idle" and "暂时无法在线办理" in turn.reply
    # None of the four can be done here: the greeting and the list of services say
    # so, and offer none of them (they listed them, and then an empty list).
    for message in ("你好", "有哪些业务可以办"):
        reply = ctl.handle("v", message).reply
        assert reply.startswith("目前没有可以在线办理的业务，请携带身份证到社保经办窗口办理"), reply
        assert "社保关系转移" not in reply


def test_a_portal_down_at_start_is_a_warning_not_a_refusal(tmp_path, caplog, monkeypatch):
    pytest.importorskip("playwright")
    ctl = start(tmp_path, sys.executable, caplog, monkeypatch)  # any executable "browser"
    [line] = [w for w in warnings(caplog) if "portal" in w]
    assert line.startswith(f"the portal {NOWHERE} is not reachable now")
    assert "not available online" not in line
    assert ctl.unavailable == {}
    assert ctl.handle("u", "我要把社保从杭州转到拉萨").state == "collecting"


def test_a_browser_gone_after_start_fails_the_submission_without_a_retry(
        tmp_path, caplog, monkeypatch):
    pytest.importorskip("playwright")
    ctl = start(tmp_path, sys.executable, caplog, monkeypatch)
    business = ctl.catalog["social_transfer"]
    ctl.executor.get(business).chromium = str(tmp_path / "gone")  # removed since the start
    try:
        for text in ("我要把社保从杭州转到苏州", "330122196303150178", "张伟", "确认"):
            turn = ctl.handle("u", text)
        deadline = time.monotonic() + 30
        while turn.state == "executing" and time.monotonic() < deadline:
            time.sleep(0.1)
            turn = ctl.current("u")
    finally:
        ctl.runner.shutdown()
    assert turn.state == "failed"
    assert "暂时无法在线办理" in turn.notice and "申请没有提交" in turn.notice
    assert "重试" not in turn.notice
    assert "retry_submit" not in [t["function"]["name"] for t in
                                  ctl.toolset(turn.state, business, None, False)]


def test_the_executor_refuses_a_job_it_cannot_start(tmp_path):
    executor = RpaExecutor(tmp_path, chromium=str(tmp_path / "gone"), handoff_text="12345热线")
    business = build_controller(settings(tmp_path, sys.executable)).catalog["card_apply"]
    options = executor.Options.model_validate(business.api.options)
    with pytest.raises(ExecutorError) as caught:
        executor.run(business, {}, idempotency_key="k" * 32, options=options)
    assert (caught.value.retryable, caught.value.unknown) == (False, True)
    assert caught.value.message.endswith("或联系12345热线咨询。")
    assert not (tmp_path / ("k" * 16)).exists()  # no trace: nothing was opened
