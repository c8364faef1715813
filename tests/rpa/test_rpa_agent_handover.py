"""When direct matching cannot finish a form, the rpa executor hands it over to the
browser agent. Here a form (its 姓名 control named only through ``aria-labelledby``,
which both read) asks for a consent the business does not set in ``fixed``: a
required control no value fits, which the agent ticks."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest
from flask import Flask, request
from werkzeug.serving import make_server

from si_agent.config.model import Business
from si_agent.errors import ExecutorError
from si_agent.executor import JobContext, texts
from si_agent.executor.rpa import RpaExecutor, RpaOptions

PAGE = """<!doctype html><html lang="zh-CN"><head><title>转移申请</title></head><body><main>
<h1>社保关系转移</h1>{error}
<form method="post">
  <span id="who">申请人姓名</span> <input name="a" aria-labelledby="who" required value="{a}">
  <label for="i">身份证号</label> <input id="i" name="i" required value="{i}">
  <label for="f">转出地</label> <input id="f" name="f" required value="{f}">
  <label for="t">转入地</label> <input id="t" name="t" required value="{t}">
  <label><input type="checkbox" name="ok" value="1" required>我已阅读并同意承诺书</label>
  <button>提交申请</button>
</form></main></body></html>"""


WRAPPED = """<!doctype html><html lang="zh-CN"><body><main><form method="post">
  <label>姓名 <input name="xm" required></label>
  <label>身份证号 <input name="sfz" required></label>
  <label>转出地 <input name="zc" required></label>
  <label>转入地 <input name="zr" required></label>
  <button>提交申请</button></form></main></body></html>"""


@pytest.fixture
def site() -> Iterator[tuple[str, list[dict]]]:
    app, received = Flask(__name__), []

    @app.route("/wrapped", methods=["GET", "POST"])
    def wrapped():
        """Labels around their inputs, no ids: the controls are found by name."""
        if request.method == "POST":
            received.append(dict(request.form))
            if request.args.get("silent"):  # neither a number nor a refusal
                return WRAPPED
            return "<h1>提交成功</h1><p>受理编号：SI20261201008888</p>"
        return WRAPPED

    @app.route("/form", methods=["GET", "POST"])
    def form():
        values = {k: request.form.get(k, "") for k in "aift"}
        if request.method == "POST" and all(values.values()) and request.form.get("ok"):
            received.append(values)
            return "<h1>提交成功</h1><p>受理编号：SI20261201009999</p>"
        error = '<p role="alert">请填写完整</p>' if request.method == "POST" else ""
        return PAGE.format(error=error, **values)

    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}/form", received
    server.shutdown()


def test_the_agent_finishes_a_form_direct_matching_cannot(site, tmp_path, chromium, catalog):
    url, received = site
    business: Business = catalog["social_transfer"]
    executor = RpaExecutor(tmp_path, chromium=chromium)
    values = {"from_city": "杭州市", "to_city": "苏州市", "id_number": "330122196303150178",
              "name": "张伟"}
    try:
        result = executor.run(business, values, idempotency_key="h" * 32,
                              options=RpaOptions(url=url), job=JobContext(id="handover"))
    finally:
        executor.close()
    assert result["application_no"] == "SI20261201009999"
    assert received == [{"a": "张伟", "i": "330122196303150178", "f": "杭州市", "t": "苏州市"}]
    log = (tmp_path / "handover" / "actions.log").read_text("utf-8")
    assert "match name -> '申请人姓名' (exact)" in log  # read through aria-labelledby
    assert "the agent takes over" in log and "agent: done" in log
    steps = (tmp_path / "handover" / "agent" / "steps.jsonl").read_text("utf-8")
    assert "勾选必填的我已阅读并同意承诺书" in steps
    assert "张伟" not in steps and "330122196303150178" not in steps


def test_the_agent_says_what_it_could_not_fill(site, tmp_path, chromium, catalog):
    url, received = site
    executor = RpaExecutor(tmp_path, chromium=chromium)
    values = {"from_city": "杭州市", "to_city": "苏州市", "id_number": "330122196303150178",
              "name": "张伟"}
    business = catalog["social_transfer"]
    try:
        with pytest.raises(ExecutorError) as failed:  # 姓名 is not a value it was given
            executor.run(business, {**values, "name": None}, idempotency_key="m" * 32,
                         options=RpaOptions(url=url), job=JobContext(id="missing"))
    finally:
        executor.close()
    assert "申请人姓名未填写" in failed.value.message and not received


VALUES = {"from_city": "杭州市", "to_city": "苏州市", "id_number": "330122196303150178",
          "name": "张伟"}


def test_controls_without_ids_and_a_submit_with_no_answer(site, tmp_path, chromium, catalog):
    url, received = site
    wrapped = url.replace("/form", "/wrapped")
    executor = RpaExecutor(tmp_path, chromium=chromium)
    try:
        result = executor.run(catalog["social_transfer"], VALUES, idempotency_key="w" * 32,
                              options=RpaOptions(url=wrapped), job=JobContext(id="wrapped"))
        assert result["application_no"] == "SI20261201008888"
        assert received == [{"xm": "张伟", "sfz": "330122196303150178", "zc": "杭州市",
                             "zr": "苏州市"}]
        with pytest.raises(ExecutorError) as unknown:  # never submitted twice
            executor.run(catalog["social_transfer"], VALUES, idempotency_key="s" * 32,
                         options=RpaOptions(url=wrapped + "?silent=1"),
                         job=JobContext(id="silent"))
    finally:
        executor.close()
    assert unknown.value.message == texts.RPA_NO_RESULT and not unknown.value.retryable
    assert len(received) == 2
