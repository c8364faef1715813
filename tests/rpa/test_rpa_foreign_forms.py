"""Forms in other styles than the demo portal's (issue 30, items 2-8), filled by the rpa
executor in real Chromium: labels that differ in case, width, punctuation and required
marks, or that only a placeholder, ``aria-label``, ``aria-labelledby`` or a table cell
gives; options chosen by value or by part of their wording; dates and numbers typed
as their inputs take them; radio groups without a fieldset, checkbox groups and
multi-selects for list values; buttons named Continue, Apply or 提 交, or a form's
lone submit button; a form its scripts build after load. Each page is served by a
small local server that records what it received."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from flask import Flask, request
from werkzeug.serving import make_server

from si_agent.config.model import Business
from si_agent.errors import ExecutorError
from si_agent.executor import JobContext, texts
from si_agent.executor.rpa import RpaExecutor, RpaOptions
from si_agent.executor.rpa.trace import FAILED, FILLED

DONE = "<h1>Thank you</h1><p>受理编号：SI20261203000042</p>"

# Bootstrap-like markup in English: labels in other case and with required marks,
# options by part of their wording or by value, typed inputs, a radio group whose
# label is a <p> before it, a checkbox group, a multi-select, "Apply now".
ENGLISH = """<!doctype html><html lang="en"><body><div class="container">
<form method="post" action="/done/en" class="needs-validation">
 <div class="mb-3"><label for="fn" class="form-label">Full Name <span class="text-danger">*</span>
   </label><input id="fn" name="full_name" class="form-control"></div>
 <div class="mb-3"><label for="em">Email Address</label><input id="em" name="email" type="email"></div>
 <div class="mb-3"><label for="dob">Date of Birth</label><input id="dob" name="dob" type="date"></div>
 <div class="mb-3"><label for="t">Preferred start time</label><input id="t" name="t" type="time"></div>
 <div class="mb-3"><label for="mo">Available from (month)</label><input id="mo" name="mo" type="month"></div>
 <div class="mb-3"><label for="sh">Shift</label><select id="sh" name="shift">
   <option value="">Choose...</option><option value="m">Morning (9:00 AM - 12:00 PM)</option>
   <option value="e">Evening (6:00 PM - 9:00 PM)</option></select></div>
 <div class="mb-3"><label for="dur">Contract length</label><select id="dur" name="duration">
   <option value="3 months">Short</option><option value="6 months">Half a year</option>
   <option value="12 months">One year</option></select></div>
 <p class="form-label">Gender</p>
 <div class="form-check"><input class="form-check-input" type="radio" name="gender" value="F"
   id="gf"><label class="form-check-label" for="gf">Female</label></div>
 <div class="form-check"><input class="form-check-input" type="radio" name="gender" value="M"
   id="gm"><label class="form-check-label" for="gm">Male</label></div>
 <p>Interests</p>
 <label><input type="checkbox" name="interests" value="reading"> Reading</label>
 <label><input type="checkbox" name="interests" value="travel"> Travel</label>
 <label><input type="checkbox" name="interests" value="music"> Music</label>
 <div class="mb-3"><label for="lang">Languages spoken</label>
   <select id="lang" name="lang" multiple><option value="en">English</option>
   <option value="zh">Chinese</option><option value="fr">French</option></select></div>
 <div class="mb-3"><label for="yrs">Years of experience</label><input id="yrs" name="yrs"
   type="number"></div>
 <button type="reset" class="btn btn-secondary">Reset</button>
 <button type="submit" class="btn btn-primary">Apply now</button>
</form></div></body></html>"""

ENGLISH_FIELDS = [
    {"key": "name", "label": "Name", "type": "text"},
    {"key": "email", "label": "email", "type": "text"},
    {"key": "dob", "label": "Date of birth", "type": "date"},
    {"key": "start_time", "label": "Start time", "type": "text"},
    {"key": "from_month", "label": "Available from", "type": "text"},
    {"key": "shift", "label": "shift", "type": "text"},
    {"key": "duration", "label": "Contract Length", "type": "text"},
    {"key": "gender", "label": "gender", "type": "text"},
    {"key": "interests", "label": "Interests", "type": "text"},
    {"key": "languages", "label": "Languages spoken", "type": "text"},
    {"key": "years", "label": "Years of experience", "type": "text"},
]
ENGLISH_VALUES: dict[str, Any] = {
    "name": "Jane Doe", "email": "jane@example.org", "dob": "1990年5月6日",
    "start_time": "下午3点", "from_month": "2026年1月", "shift": "evening",
    "duration": "6 months", "gender": "female", "interests": ["Reading", "Music"],
    "languages": "English、French", "years": "3 years"}
ENGLISH_SENT = {"full_name": ["Jane Doe"], "email": ["jane@example.org"], "dob": ["1990-05-06"],
                "t": ["15:00"], "mo": ["2026-01"], "shift": ["e"], "duration": ["6 months"],
                "gender": ["F"], "interests": ["reading", "music"], "lang": ["en", "fr"],
                "yrs": ["3"]}

# A plain table of a Chinese government form: labels in cells beside the inputs, with
# 必填 marks; one input known only by its placeholder, one by aria-label, one by
# aria-labelledby; a radio group named by its row's first cell; "提 交" as an input.
CHINESE = """<!doctype html><html lang="zh-CN"><body>
<form method="post" action="/done/zh"><table border="1">
<tr><td>申请人姓名<span style="color:red">*</span>（必填）</td><td><input name="a1"></td></tr>
<tr><td><b>*</b>公民身份号码：</td><td><input name="a2"></td></tr>
<tr><td></td><td><input name="a3" placeholder="请输入手机号码"></td></tr>
<tr><td id="lbl-birth">出生日期</td><td><input name="a4" type="text" aria-labelledby="lbl-birth">
  </td></tr>
<tr><td>性别</td><td><label><input type="radio" name="sex" value="1">男</label>
  <label><input type="radio" name="sex" value="2">女</label></td></tr>
<tr><td colspan="2"><input name="a5" aria-label="通讯地址" size="60"></td></tr>
<tr><td>参保日期</td><td><input name="a6" type="date"></td></tr>
</table><input type="submit" value="提 交"></form></body></html>"""

CHINESE_FIELDS = [
    {"key": "name", "label": "姓名", "type": "name"},
    {"key": "id_number", "label": "身份证号", "type": "idcard"},
    {"key": "phone", "label": "手机号码", "type": "phone"},
    {"key": "birth_date", "label": "出生日期", "type": "date"},
    {"key": "gender", "label": "性别", "type": "text"},
    {"key": "mailing_address", "label": "通讯地址", "type": "text"},
    {"key": "start_date", "label": "参保日期", "type": "date"},
]
CHINESE_VALUES = {"name": "张伟", "id_number": "330122196303150178", "phone": "13800138001",
                  "birth_date": "1963-03-15", "gender": "女", "mailing_address": "杭州市文三路100号",
                  "start_date": "2025/03/01"}
CHINESE_SENT = {"a1": ["张伟"], "a2": ["330122196303150178"], "a3": ["13800138001"],
                "a4": ["1963-03-15"], "sex": ["2"], "a5": ["杭州市文三路100号"],
                "a6": ["2025-03-01"]}

# Two pages: "Continue →" then a form whose only submit button says "Go".
WIZARD_1 = """<!doctype html><html lang="en"><body><form method="post" action="/wizard/2">
<label for="e">E-mail</label><input id="e" name="e">
<button type="button">Back</button><button type="submit">Continue →</button></form></body></html>"""
WIZARD_2 = """<!doctype html><html lang="en"><body><form method="post" action="/done/wizard">
<input type="hidden" name="e" value="{e}">
<label for="c">City</label><input id="c" name="c"><input type="submit" value="Go"></form>
</body></html>"""
WIZARD_FIELDS = [{"key": "email", "label": "Email", "type": "text"},
                 {"key": "city", "label": "city", "type": "text"}]

# Built by a script after load: nothing to see when the page has loaded.
SCRIPTED = """<!doctype html><html lang="en"><body><div id="app">Loading…</div><script>
setTimeout(() => {
  document.getElementById("app").innerHTML = `<form method="post" action="/done/js">
    <input name="who" aria-label="Your name"><input name="mail" placeholder="Email">
    <button>Send</button></form>`;
}, 700);
</script></body></html>"""
SCRIPTED_FIELDS = [{"key": "name", "label": "Name", "type": "text"},
                   {"key": "email", "label": "Email", "type": "text"}]

# Two phones and one value: neither control is taken (a margin, not a guess).
TWO_PHONES = """<!doctype html><html lang="en"><body><form method="post" action="/done/phones">
<label for="h">Home phone</label><input id="h" name="h">
<label for="w">Work phone</label><input id="w" name="w">
<label for="n">Name</label><input id="n" name="n">
<button>Submit</button></form></body></html>"""

# A value no option fits, beside values that fit: the others are still filled.
SHIFTS = """<!doctype html><html lang="en"><body><form method="post" action="/done/shifts">
<label for="n">Name</label><input id="n" name="n">
<label for="d">Start date</label><input id="d" name="d" type="date">
<label for="s">Shift</label><select id="s" name="s"><option value="">--</option>
<option value="m">Morning</option><option value="e">Evening</option></select>
<button>Submit</button></form></body></html>"""


def business(fields: list[dict[str, Any]]) -> Business:
    return Business.model_validate({"id": "foreign", "name": "在线申请", "type": "handle",
                                    "description": "外部网站的表单", "keywords": ["申请"],
                                    "fields": fields})


@pytest.fixture
def site() -> Iterator[tuple[str, list[tuple[str, dict]]]]:
    app, received = Flask(__name__), []
    pages = {"en": ENGLISH, "zh": CHINESE, "js": SCRIPTED, "phones": TWO_PHONES,
             "shifts": SHIFTS}

    @app.get("/form/<name>")
    def form(name: str) -> str:
        return pages[name]

    @app.route("/wizard/<int:n>", methods=["GET", "POST"])
    def wizard(n: int) -> str:
        return WIZARD_1 if n == 1 else WIZARD_2.format(e=request.form.get("e", ""))

    @app.route("/named/<int:n>", methods=["GET", "POST"])
    def named(n: int) -> str:
        if n == 1:
            return WIZARD_1.replace("Continue →", "Weiter").replace("/wizard/2", "/named/2")
        return WIZARD_2.format(e=request.form.get("e", ""))

    @app.post("/done/<name>")
    def done(name: str) -> str:
        received.append((name, request.form.to_dict(flat=False)))
        return DONE

    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}", received
    server.shutdown()


def run(tmp_path: Path, chromium: str, fields: list[dict[str, Any]], values: dict[str, Any],
        url: str, job_id: str, **options: Any) -> dict:
    executor = RpaExecutor(tmp_path, chromium=chromium)
    try:
        return executor.run(business(fields), values, idempotency_key=job_id * 8,
                            options=RpaOptions(url=url, **options), job=JobContext(id=job_id))
    finally:
        executor.close()


def log_of(tmp_path: Path, job_id: str) -> str:
    return (tmp_path / job_id / "actions.log").read_text("utf-8")


def statuses(result_or_dir: dict | Path) -> dict[str, tuple[str, str]]:
    rows = (result_or_dir["field_status"] if isinstance(result_or_dir, dict) else
            json.loads((result_or_dir / "fields.json").read_text("utf-8")))
    return {r["key"]: (r["status"], r["reason"]) for r in rows}


def test_an_english_form_in_other_words_types_and_groups(site, tmp_path, chromium):
    base, received = site
    result = run(tmp_path, chromium, ENGLISH_FIELDS, ENGLISH_VALUES, base + "/form/en", "en")
    assert result["application_no"] == "SI20261203000042"
    assert received == [("en", ENGLISH_SENT)]
    assert statuses(result) == {k: (FILLED, "") for k in ENGLISH_VALUES}
    log = log_of(tmp_path, "en")
    # The trace says which rule placed each value.
    assert "match dob -> 'DateofBirth' (exact)" in log
    assert "match email -> 'EmailAddress' (synonym)" in log
    assert "match name -> 'FullName' (exact)" in log  # a synonym
    assert "match start_time -> 'Preferredstarttime' (contains" in log
    assert "the submit button: 'Apply now'" in log
    assert "the agent takes over" not in log


def test_a_chinese_table_form_with_placeholder_and_aria_labels(site, tmp_path, chromium):
    base, received = site
    result = run(tmp_path, chromium, CHINESE_FIELDS, CHINESE_VALUES, base + "/form/zh", "zh")
    assert received == [("zh", CHINESE_SENT)]
    assert statuses(result) == {k: (FILLED, "") for k in CHINESE_VALUES}
    log = log_of(tmp_path, "zh")
    assert "match name -> '申请人姓名' (exact)" in log  # its （必填） and * are not the label
    assert "match phone -> '请输入手机号码' (contains" in log  # only the placeholder says it
    assert "the submit button: '提 交'" in log


def test_continue_then_a_lone_submit_button(site, tmp_path, chromium):
    base, received = site
    result = run(tmp_path, chromium, WIZARD_FIELDS, {"email": "a@b.cn", "city": "Hangzhou"},
                 base + "/wizard/1", "wiz")
    assert received == [("wizard", {"e": ["a@b.cn"], "c": ["Hangzhou"]})]
    assert statuses(result) == {"email": (FILLED, ""), "city": (FILLED, "")}
    log = log_of(tmp_path, "wiz")
    assert "the next button: 'Continue →'" in log and "press next" in log
    assert "the submit button: 'Go'" in log and "press submit" in log


def test_the_business_names_its_buttons(site, tmp_path, chromium):
    """``next`` of the options names a button the usual words do not: pressed as the
    next page's, not taken for the form's lone submit button."""
    base, received = site
    result = run(tmp_path, chromium, WIZARD_FIELDS, {"email": "a@b.cn", "city": "Hangzhou"},
                 base + "/named/1", "named", next="Weiter")
    assert received == [("wizard", {"e": ["a@b.cn"], "c": ["Hangzhou"]})]
    assert result["application_no"] == "SI20261203000042"
    log = log_of(tmp_path, "named")
    assert "the next button: 'Weiter'" in log and "the submit button: 'Go'" in log


def test_a_form_built_by_a_script_after_load(site, tmp_path, chromium):
    base, received = site
    result = run(tmp_path, chromium, SCRIPTED_FIELDS, {"name": "Li Lei", "email": "li@x.cn"},
                 base + "/form/js", "js")
    assert received == [("js", {"who": ["Li Lei"], "mail": ["li@x.cn"]})]
    assert statuses(result) == {"name": (FILLED, ""), "email": (FILLED, "")}
    assert "the submit button: 'Send'" in log_of(tmp_path, "js")


def test_two_controls_that_fit_one_value_take_it_neither(site, tmp_path, chromium):
    base, received = site
    fields = [{"key": "phone", "label": "Phone", "type": "text"},
              {"key": "name", "label": "Name", "type": "text"}]
    with pytest.raises(ExecutorError) as stopped:
        run(tmp_path, chromium, fields, {"phone": "13800138001", "name": "Li Lei"},
            base + "/form/phones", "phones")
    assert received == []  # nothing sent with the phone left out
    assert stopped.value.message == texts.RPA_UNPLACED.format(labels="Phone")
    log = log_of(tmp_path, "phones")
    assert "ambiguous: phone fits 'Homephone' and 'Workphone'" in log
    assert statuses(tmp_path / "phones")["name"] == (FILLED, "")


def test_a_value_no_option_fits_is_reported_with_the_options(site, tmp_path, chromium):
    base, received = site
    fields = [{"key": "name", "label": "Name", "type": "text"},
              {"key": "start", "label": "Start date", "type": "date"},
              {"key": "shift", "label": "Shift", "type": "text"}]
    with pytest.raises(ExecutorError) as refused:
        run(tmp_path, chromium, fields, {"name": "Li Lei", "start": "20250301",
                                         "shift": "night"}, base + "/form/shifts", "shifts")
    assert received == []
    assert refused.value.field_errors == {
        "shift": texts.RPA_NO_OPTION.format(options="Morning、Evening")}
    assert statuses(tmp_path / "shifts") == {
        "name": (FILLED, ""), "start": (FILLED, ""),
        "shift": (FAILED, texts.RPA_NO_OPTION.format(options="Morning、Evening"))}
