"""No value is left out silently (issue 30, item 1): every value the rpa executor is
given goes into a control or is reported as 未填写, and a form that has no place for
some of them is not submitted. The forms here have no ``required`` attributes, so
the form itself would accept an empty application; some of their labels no matcher
knows. They are served by a real HTTP server that records what it received."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from flask import Flask, request
from werkzeug.serving import make_server

from si_agent.app import build_controller
from si_agent.errors import ExecutorError
from si_agent.executor import JobContext, texts
from si_agent.executor.rpa import RpaExecutor, RpaOptions
from si_agent.executor.rpa.trace import FILLED, UNFILLED
from tests.rpa.conftest import settle, talk

VALUES = {"from_city": "杭州市", "to_city": "苏州市", "id_number": "330122196303150178",
          "name": "张伟"}
DONE = "<h1>提交成功</h1><p>受理编号：SI20261201007777</p>"

# English labels the matcher and the agent's offline policy cannot place.
UNKNOWN_LABELS = """<!doctype html><html lang="en"><body><main><form method="post">
  <label for="n">Who is applying</label> <input id="n" name="n">
  <label for="c">Citizen ID</label> <input id="c" name="c">
  <label for="f">Moving from</label> <input id="f" name="f">
  <label for="t">Moving to</label> <input id="t" name="t">
  <button>提交申请</button></form></main></body></html>"""

# Two pages; 身份证号 (page 1) and 转出地 (page 2) are known labels, the others are not.
PARTIAL_1 = """<!doctype html><html lang="zh-CN"><body><main>
<form method="post" action="?page=2">
  <label for="n">Who is applying</label> <input id="n" name="n">
  <label for="c">身份证号</label> <input id="c" name="c">
  <button>下一步</button></form></main></body></html>"""
PARTIAL_2 = """<!doctype html><html lang="zh-CN"><body><main>
<form method="post" action="?page=3">
  <input type="hidden" name="n" value="{n}"><input type="hidden" name="c" value="{c}">
  <label for="f">转出地</label> <input id="f" name="f">
  <label for="t">Moving to</label> <input id="t" name="t">
  <button>提交申请</button></form></main></body></html>"""

# The same two pages with every label known: nothing is left out, it goes through.
KNOWN_1 = PARTIAL_1.replace("Who is applying", "姓名")
KNOWN_2 = PARTIAL_2.replace("Moving to", "转入地")


@pytest.fixture
def site() -> Iterator[tuple[str, list[dict]]]:
    app, received = Flask(__name__), []

    def two_pages(first: str, second: str) -> str:
        page = request.args.get("page", "1")
        if page == "2":
            return second.format(n=request.form.get("n", ""), c=request.form.get("c", ""))
        if page == "3":
            received.append(dict(request.form))
            return DONE
        return first

    @app.route("/forms/social_transfer", methods=["GET", "POST"])
    def unknown():
        if request.method == "POST":  # whatever it holds: no field is required here
            received.append(dict(request.form))
            return DONE
        return UNKNOWN_LABELS

    @app.route("/partial", methods=["GET", "POST"])
    def partial():
        return two_pages(PARTIAL_1, PARTIAL_2)

    @app.route("/known", methods=["GET", "POST"])
    def known():
        return two_pages(KNOWN_1, KNOWN_2)

    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}", received
    server.shutdown()


def run(tmp_path: Path, chromium: str, business, url: str, job_id: str) -> dict:
    executor = RpaExecutor(tmp_path, chromium=chromium)
    try:
        return executor.run(business, VALUES, idempotency_key=job_id * 8,
                            options=RpaOptions(url=url), job=JobContext(id=job_id))
    finally:
        executor.close()


def table(tmp_path: Path, job_id: str) -> dict[str, tuple[str, str]]:
    rows = json.loads((tmp_path / job_id / "fields.json").read_text("utf-8"))
    return {r["key"]: (r["status"], r["reason"]) for r in rows}


def test_a_form_with_no_place_for_the_values_is_not_submitted(site, tmp_path, chromium,
                                                             catalog):
    base, received = site
    with pytest.raises(ExecutorError) as refused:
        run(tmp_path, chromium, catalog["social_transfer"], base + "/forms/social_transfer",
            "none")
    assert received == []  # nothing sent: before, an empty application was "已受理"
    error = refused.value
    assert error.message == texts.RPA_UNPLACED.format(labels="转出城市、转入城市、身份证号、姓名")
    assert not error.retryable and not error.unknown and error.field_errors == {}
    assert table(tmp_path, "none") == {k: (UNFILLED, texts.RPA_NO_PLACE) for k in VALUES}
    log = (tmp_path / "none" / "actions.log").read_text("utf-8")
    assert "before the submit, values are in no control" in log
    assert "the agent takes over" in log and "agent: stopped" in log  # tried first
    steps = (tmp_path / "none" / "agent" / "steps.jsonl").read_text("utf-8")
    assert "不提交" in steps  # the agent's own submit was held back
    assert VALUES["id_number"] not in log + steps


def test_values_for_page_two_wait_for_it_and_only_the_unplaced_are_named(
        site, tmp_path, chromium, catalog):
    base, received = site
    with pytest.raises(ExecutorError) as refused:
        run(tmp_path, chromium, catalog["social_transfer"], base + "/partial", "part")
    assert received == []
    assert refused.value.message == texts.RPA_UNPLACED.format(labels="转入城市、姓名")
    rows = table(tmp_path, "part")
    assert rows == {"from_city": (FILLED, ""), "id_number": (FILLED, ""),
                    "to_city": (UNFILLED, texts.RPA_NO_PLACE),
                    "name": (UNFILLED, texts.RPA_NO_PLACE)}
    log = (tmp_path / "part" / "actions.log").read_text("utf-8")
    # At page 1's 下一步, 转出地 (on page 2) is not a value left out.
    assert "press next" in log and log.index("press next") < log.index("the agent takes over")
    assert "press submit" not in log


def test_a_form_where_every_value_has_a_place_still_succeeds(site, tmp_path, chromium,
                                                             catalog):
    base, received = site
    result = run(tmp_path, chromium, catalog["social_transfer"], base + "/known", "known")
    assert result["application_no"] == "SI20261201007777"
    assert received == [{"n": "张伟", "c": "330122196303150178", "f": "杭州市",
                         "t": "苏州市"}]
    assert {f["key"]: f["status"] for f in result["field_status"]} == {
        k: FILLED for k in VALUES}
    assert "the agent takes over" not in (tmp_path / "known" / "actions.log").read_text()


def test_the_citizen_hears_which_values_had_no_place(site, settings, chromium, monkeypatch):
    base, received = site
    monkeypatch.setenv("SI_PORTAL_URL", base)
    monkeypatch.setenv("SI_PORTAL_USER", "demo")
    monkeypatch.setenv("SI_PORTAL_PASSWORD", "demo123")
    ctl = build_controller(settings, engine="rules")
    try:
        turn = talk(ctl, "我要把社保从杭州转到苏州", VALUES["id_number"], VALUES["name"], "确认")
        assert turn.state == "executing"
        turn = settle(ctl)
    finally:
        ctl.runner.shutdown()
    assert received == []
    assert turn.state != "done" and not turn.result, turn.notice
    assert "没有找到填写转出城市、转入城市、身份证号、姓名的位置" in turn.notice
    assert "申请没有提交" in turn.notice and "已受理" not in turn.notice
