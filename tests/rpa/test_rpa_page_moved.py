"""The page moves under the rpa executor: another request (a killed attempt's late
POST, another window) moved the draft on while this job filled a page. The job
must perceive the page again and carry on, not report the citizen's values as
refused.

- The demo portal, which fences: the test itself posts page 1 of the job's draft
  while the job fills it; the job's own page-1 POST then carries a stale page token,
  the portal answers 409 with page 2, and the job fills page 2 and submits.
- A site without fencing (a small Flask app): the job's page-1 POST is answered with
  page 2, every control empty and "请填写…", as the demo portal did before it fenced.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator

import httpx
import pytest
from flask import Flask, request
from werkzeug.serving import make_server

from si_agent.executor import Executors, JobContext
from si_agent.executor.rpa import RpaExecutor, RpaOptions
from tests.rpa.conftest import PASSWORD, USER, applications

ZHANG_WEI = "330122196303150178"
VALUES = {"id_number": ZHANG_WEI, "name": "张伟", "phone": "13800138001",
          "separation_date": "2026-10-31", "separation_reason": "劳动合同期满终止",
          "bank_card": "6222021202004568821"}
KEY = "p" * 32


def run(executor: RpaExecutor, business, options, progress=None) -> dict:
    try:
        return executor.run(business, VALUES, idempotency_key=KEY, options=options,
                            progress=progress, job=JobContext(id="moved"))
    finally:
        executor.close()


def test_a_stale_page_token_is_answered_with_the_page_the_draft_is_on(ctl, settings,
                                                                      fresh_portal):
    business = ctl.catalog["unemployment_benefit"]
    options = Executors(settings).options(business)
    draft_file = settings.data_dir / "rpa" / "drafts" / f"{KEY}.json"
    moved: list[int] = []

    def move_the_draft(text: str) -> None:  # while page 1 is filled, another window posts it
        if not text.startswith("正在填写") or moved:
            return
        url = json.loads(draft_file.read_text("utf-8"))["draft"]
        with httpx.Client(base_url=fresh_portal) as other:
            other.post("/login", data={"username": USER, "password": PASSWORD, "next": "/"})
            page = other.get(url).text
            token = re.search(r'name="_rev" value="(\d+)"', page)
            answer = other.post(url, data={"action": "next", "name": "张伟",
                                           "id_type": "居民身份证", "id_number": ZHANG_WEI,
                                           "phone": "13800138001",
                                           **({"_rev": token.group(1)} if token else {})},
                                follow_redirects=True)
            assert "办理信息" in answer.text
            moved.append(answer.status_code)

    executor = RpaExecutor(settings.data_dir / "rpa", chromium=settings.rpa_chromium)
    result = run(executor, business, options, progress=move_the_draft)
    assert moved == [200]
    [application] = applications(fresh_portal)
    assert result["application_no"] == application["application_no"]
    assert {k: application["values"][k] for k in VALUES} == VALUES
    log = (settings.data_dir / "rpa" / "moved" / "actions.log").read_text("utf-8")
    assert "portal answered 409" in log and "fencing token 1" in log


PAGES = (
    ("基本信息", (("name", "姓名"), ("id_number", "身份证号"), ("phone", "手机号码"))),
    ("办理信息", (("separation_date", "离职日期"), ("bank_card", "银行卡号"))),
)
REASONS = ("劳动合同期满终止", "协商一致解除")


def render(index: int, errors: dict[str, str]) -> str:
    title, fields = PAGES[index]
    rows = []
    for name, label in fields:
        error = errors.get(name)
        invalid = f' aria-invalid="true" aria-describedby="{name}-e"' if error else ""
        rows.append(f'<label for="{name}">{label}</label> <input id="{name}" name="{name}"'
                    f' required{invalid}>' + (f'<p id="{name}-e">{error}</p>' if error else ""))
    if index == 1:
        error = errors.get("reason")
        invalid = ' aria-invalid="true" aria-describedby="reason-e"' if error else ""
        radios = "".join(f'<input type="radio" id="r{n}" name="reason" value="{r}" required'
                         f'{invalid}><label for="r{n}">{r}</label>'
                         for n, r in enumerate(REASONS))
        rows.append(f"<fieldset><legend>离职原因</legend>{radios}"
                    + (f'<p id="reason-e">{error}</p>' if error else "") + "</fieldset>")
    button = "下一步" if index == 0 else "提交申请"
    return (f'<!doctype html><html lang="zh-CN"><body><main><h1>失业保险金申领</h1>'
            f'<h2>{title}</h2><form method="post">{"".join(rows)}'
            f'<button>{button}</button></form></main></body></html>')


@pytest.fixture
def unfenced() -> Iterator[tuple[str, list[dict]]]:
    """A two-page form whose first POST is answered with page 2, empty and refused."""
    app, received, state = Flask(__name__), [], {"page": 0}

    @app.route("/form", methods=["GET", "POST"])
    def form():
        if request.method == "GET":
            return render(state["page"], {})
        received.append(dict(request.form))
        if state["page"] == 0:  # a late request moved the draft on: this POST hit page 2
            state["page"] = 1
            return render(1, {"separation_date": "请填写离职日期", "bank_card": "请填写银行卡号",
                              "reason": "请选择离职原因"})
        return "<h1>提交成功</h1><p>受理编号：SI20261201007777</p>"

    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}/form", received
    server.shutdown()


def test_errors_only_on_another_page_the_job_never_filled_are_not_a_refusal(
        unfenced, tmp_path, chromium, catalog):
    url, received = unfenced
    executor = RpaExecutor(tmp_path, chromium=chromium)
    result = run(executor, catalog["unemployment_benefit"], RpaOptions(url=url))
    assert result["application_no"] == "SI20261201007777"
    assert received[-1] == {"separation_date": "2026-10-31", "bank_card": "6222021202004568821",
                            "reason": "劳动合同期满终止"}
    log = (tmp_path / "moved" / "actions.log").read_text("utf-8")
    assert "the page moved under the job" in log
