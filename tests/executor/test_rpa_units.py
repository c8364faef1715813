"""The rpa executor's parts that need no browser: options, matching, option choice,
discovery's inference, and the trace retention."""

from __future__ import annotations

import os
import time

import pytest

from si_agent.errors import ConfigErrors
from si_agent.executor import Executors
from si_agent.executor.rpa import RpaExecutor
from si_agent.executor.rpa.discover import form_hash, infer_fields
from si_agent.executor.rpa.form import Choice, Control, choose, match


def control(label, kind="text", required=True, options=(), key=None):
    return Control(key=key or f"id:{label}", kind=kind, label=label + " *", required=required,
                   options=[Choice(value=o, label=o) for o in options])


def test_options_are_checked_when_businesses_load(make_business, settings):
    executors = Executors(settings)
    good = make_business("web", ["name"], kind="rpa", options={"url": "https://gov.example/f"})
    assert executors.options(good).submit == "提交申请"
    for bad in ({"url": "ftp://x"}, {"url": "https://x", "success": "("},
                {"url": "https://x", "login": {"url": "https://x/login"}}):
        with pytest.raises(ConfigErrors):
            executors.options(make_business("web", ["name"], kind="rpa", options=bad))


def test_allowed_origins_are_checked_when_businesses_load(make_business, settings):
    executors = Executors(settings)
    good = make_business("web", ["name"], kind="rpa", options={
        "url": "https://gov.example/f", "allowed_origins": ["https://sso.gov.example",
                                                            "http://127.0.0.1:8100"]})
    assert executors.options(good).allowed_origins == ("https://sso.gov.example",
                                                       "http://127.0.0.1:8100")
    for bad in (["https://sso.gov.example/login"], ["sso.gov.example"], ["ftp://x.example"],
                ["https://user@x.example"], ["https://x.example/"]):
        with pytest.raises(ConfigErrors, match="allowed_origins"):
            executors.options(make_business("web", ["name"], kind="rpa", options={
                "url": "https://gov.example/f", "allowed_origins": bad}))
    with pytest.raises(ConfigErrors, match="login.url"):  # a login page off the portal
        executors.options(make_business("web", ["name"], kind="rpa", options={
            "url": "https://gov.example/f", "login": {
                "url": "https://evil.example/login", "user_env": "U", "password_env": "P"}}))


def test_fields_match_by_mapping_label_and_synonyms(make_business, catalog_business):
    business = catalog_business("social_transfer")
    controls = [control("申请人姓名"), control("证件号码"), control("原参保地", "select"),
                control("转入城市", "select"), control("备注", required=False)]
    found = match(business, controls, {"to_city": "转入城市"})
    assert {k: c.name for k, c in found.items()} == {
        "name": "申请人姓名", "id_number": "证件号码", "from_city": "原参保地",
        "to_city": "转入城市"}


def test_options_are_chosen_through_the_enums_aliases(catalog_business):
    bank = catalog_business("card_apply").field("bank")
    select = control("开户银行", "select", options=["工商银行", "农业银行", "建设银行"])
    assert choose(bank, select, "中国工商银行").label == "工商银行"
    radio = control("离职原因", "radio", options=["劳动合同期满终止", "协商一致解除"])
    reason = catalog_business("unemployment_benefit").field("separation_reason")
    assert choose(reason, radio, "劳动合同期满终止").value == "劳动合同期满终止"
    assert choose(None, select, "招商银行") is None


def test_discovery_infers_keys_types_and_options():
    controls = [control("申请人姓名"), control("证件类型", "select", options=["居民身份证"]),
                control("证件号码"), control("联系电话"), control("离职日期", "date"),
                control("开户银行", "select", options=["中国工商银行", "交通银行"]),
                control("户口性质", "radio", options=["城镇", "农村"]),
                control("单位名称"), control("备注", "textarea", required=False),
                control("我已阅读并同意承诺书", "checkbox")]
    fields = infer_fields(controls, {"证件类型": "居民身份证"},
                          {"单位名称": {"key": "employer", "prompt": "请提供原单位全称。"}})
    assert [(f["key"], f["type"]) for f in fields] == [
        ("name", "name"), ("id_number", "idcard"), ("phone", "phone"),
        ("separation_date", "date"), ("bank", "enum"), ("hu_kou_xing_zhi", "enum"),
        ("employer", "text")]
    bank = next(f for f in fields if f["key"] == "bank")
    assert bank["options"] == [{"value": "中国工商银行", "aliases": ["工商银行"]},
                               {"value": "交通银行"}]
    assert bank["prompt"] == "请选择开户银行：中国工商银行、交通银行。"
    assert fields[-1]["prompt"] == "请提供原单位全称。"
    assert form_hash(controls) == form_hash(list(controls))
    by_synonym = infer_fields([control("社会保障号码"), control("社会保障卡金融账号"),
                               control("备案生效日期")], {})
    assert [(f["key"], f["type"]) for f in by_synonym] == [
        ("id_number", "idcard"), ("bank_card", "bank_card"), ("start_date", "date")]
    assert form_hash(controls) != form_hash(controls[:-1])


def test_old_traces_are_deleted_when_a_job_starts(tmp_path):
    old, new = tmp_path / "job-old", tmp_path / "job-new"
    forms, drafts = tmp_path / "forms", tmp_path / "drafts"
    for directory in (old, new, forms, drafts):
        directory.mkdir()
        (directory / "01-page.png").write_bytes(b"png")
    (forms / "web.json").write_text("{}")
    (drafts / "old.json").write_text("{}")
    (drafts / "new.json").write_text("{}")
    week_ago = time.time() - 8 * 86400
    for path in (old, forms, forms / "web.json", drafts, drafts / "old.json"):
        os.utime(path, (week_ago, week_ago))
    RpaExecutor(tmp_path, retention_days=7)._purge_traces()
    assert not old.exists() and new.exists()
    assert (forms / "web.json").exists()  # the discovery cache is no trace
    assert not (drafts / "old.json").exists() and (drafts / "new.json").exists()


def test_discovery_settings_are_checked_when_businesses_load(tmp_path):
    from si_agent.config.loader import check_directory

    (tmp_path / "web.yaml").write_text("""\
id: web
name: 网上办理
type: handle
description: 测试。
keywords: [网上办理]
fields: discover
field_overrides:
  联系电话: {type: mobile}
  备注: {max_length: many}
require_confirm: true
api: {kind: http, url: "https://gov.example/api", result_template: ok}
""", "utf-8")
    _, errors = check_directory(tmp_path)
    text = "\\n".join(str(e) for e in errors)
    assert "fields: discover needs api.kind: rpa" in text
    assert "field_overrides.联系电话.type: unknown field type 'mobile'" in text
    assert "field_overrides.备注.max_length" in text


def test_a_rerun_of_a_job_keeps_the_first_attempts_trace(tmp_path):
    from si_agent.executor.rpa.trace import Trace

    first = Trace(tmp_path / "job-1", tmp_path / "drafts" / "k.json")
    first.note("press submit")
    first.save()
    second = Trace(tmp_path / "job-1", tmp_path / "drafts" / "k.json")
    second.note("opened the draft again")
    second.save()
    assert second.directory == tmp_path / "job-1" / "attempt-2"
    assert "press submit" in (tmp_path / "job-1" / "actions.log").read_text("utf-8")
    assert oct((tmp_path / "job-1").stat().st_mode)[-3:] == "700"


def test_the_origin_policy_matches_origins_exactly():
    from si_agent.origins import OriginPolicy, origin_of

    assert origin_of("HTTPS://Gov.Example:443/f?x=1") == "https://gov.example"
    assert origin_of("http://127.0.0.1:8100/f") == "http://127.0.0.1:8100"
    assert origin_of("data:text/html,x") is None and origin_of("about:blank") is None
    policy = OriginPolicy(["https://gov.example/forms/a", "http://127.0.0.1:8100"])
    elsewhere = policy.elsewhere()  # what Playwright's route is asked about
    for url in ("https://gov.example/f", "https://gov.example:443/f", "https://gov.example",
                "http://127.0.0.1:8100/x?y#z"):
        assert policy.allows(url) and not elsewhere.search(url), url
    for url in ("http://gov.example/f", "https://gov.example.evil.cn/", "https://evil.cn/gov.example",
                "http://127.0.0.1:81000/", "http://127.0.0.2:8100/", "https://gov.example:8443/",
                "about:blank", "javascript:alert(1)"):
        assert not policy.allows(url), url
        assert elsewhere.search(url) or url.startswith(("about:", "javascript:")), url


# -- attempts: fencing token, page moved, a trace per attempt ---------------------------


def shown(label, key, value="", error=None, kind="text"):
    return Control(key=key, kind=kind, label=label, required=True, value=value, error=error)


PAGE_ONE = [shown("姓名", "id:name", "张伟"), shown("证件类型", "id:id_type", "居民身份证",
                                                kind="select"),
            shown("身份证号", "id:id_number", "330122196303150178"),
            shown("手机号码", "id:phone", "13800138001")]
FILLED_ONE = {"id:name", "id:id_type", "id:id_number", "id:phone"}
PUT_ONE = {c.key: c.value for c in PAGE_ONE}


def test_errors_on_another_page_the_press_never_filled_mean_the_page_moved():
    from si_agent.executor.rpa.fencing import page_moved

    # A late POST of a dead attempt moved the draft on: this page-1 POST was read as
    # page 2, empty, and refused.
    page_two = [shown("离职日期", "id:separation_date", error="请填写离职日期"),
                shown("离职原因", "radio:separation_reason", error="请选择离职原因",
                      kind="radio"),
                shown("银行卡号", "id:bank_card", error="请填写银行卡号"),
                shown("我已阅读并同意承诺书", "id:agree", error="请勾选承诺书", kind="checkbox")]
    assert page_moved(PAGE_ONE, FILLED_ONE, PUT_ONE, page_two)
    # Moved back: page 1 shown with its controls emptied by a post for page 2.
    page_two_filled = [shown("离职日期", "id:separation_date", "2026-10-31")]
    emptied = [shown("姓名", "id:name", error="请填写姓名"), *PAGE_ONE[1:]]
    assert page_moved(page_two_filled, {"id:separation_date"},
                      {**PUT_ONE, "id:separation_date": "2026-10-31"}, emptied)


def test_errors_on_what_the_job_sent_are_a_refusal():
    from si_agent.executor.rpa.fencing import page_moved

    refused = [shown("姓名", "id:name", "张伟", error="姓名与身份证号不一致"), *PAGE_ONE[1:]]
    assert not page_moved(PAGE_ONE, FILLED_ONE, PUT_ONE, refused)
    # The last page rechecks page 1 and shows it: the value there is still this job's.
    page_two = [shown("离职日期", "id:separation_date", "2026-10-31")]
    recheck = [shown("姓名", "id:name", "张伟", error="姓名与公安部门登记的信息不一致"),
               *PAGE_ONE[1:]]
    assert not page_moved(page_two, {"id:separation_date"},
                          {**PUT_ONE, "id:separation_date": "2026-10-31"}, recheck)
    # The page pressed asks for a control no value of the business fits.
    more = [*PAGE_ONE, shown("单位名称", "id:employer", error="请填写单位名称")]
    assert not page_moved(more, FILLED_ONE, PUT_ONE, more)
    assert not page_moved(PAGE_ONE, FILLED_ONE, PUT_ONE, PAGE_ONE)  # no errors at all


def test_the_fencing_token_is_above_every_earlier_run_on_the_draft():
    from si_agent.executor.base import JobContext
    from si_agent.executor.rpa.fencing import fencing_token

    assert fencing_token(JobContext(id="j")) == 1
    assert fencing_token(JobContext(id="j", attempt=2, resume={"draft": "u", "attempt": 1})) == 2
    # A new job (the citizen's 重试) on a draft a taken-over job posted to as attempt 3.
    assert fencing_token(JobContext(id="k", resume={"draft": "u", "attempt": 3})) == 4
    assert fencing_token(JobContext(id="k", resume={"draft": "u", "attempt": "9"})) == 1


def test_the_trace_is_on_disk_as_it_goes_one_folder_per_attempt(tmp_path):
    from si_agent.executor.rpa.trace import FAILED, FieldStatus, Trace

    first = Trace(tmp_path / "job-1", tmp_path / "drafts" / "k.json")
    first.note("press next")  # no save(): a worker killed now leaves this
    first.fields = [FieldStatus(label="姓名", key="name", status=FAILED, reason="不一致")]
    assert "press next" in (tmp_path / "job-1" / "actions.log").read_text("utf-8")
    assert "不一致" in (tmp_path / "job-1" / "fields.json").read_text("utf-8")
    second = Trace(tmp_path / "job-1", tmp_path / "drafts" / "k.json", attempt=2)
    second.note("attempt 2")
    assert second.directory == tmp_path / "job-1" / "attempt-2"
    assert second.root == tmp_path
    assert (second.directory / "actions.log").read_text("utf-8").endswith("attempt 2\n")
    assert oct(second.directory.stat().st_mode)[-3:] == "700"
    third = Trace(tmp_path / "job-1", tmp_path / "drafts" / "k.json", attempt=2)
    third.note("the same attempt run again by hand")
    assert third.directory == tmp_path / "job-1" / "attempt-3"


@pytest.mark.parametrize("origin", ["http://*.gov.example", "https://portal*.example.cn"])
def test_a_wildcard_origin_is_refused_at_load(origin):
    from si_agent.origins import check_origin

    with pytest.raises(ValueError, match="must be an origin"):
        check_origin(origin)


def test_a_portal_url_with_credentials_is_refused_at_load():
    from si_agent.config.envsubst import check_url

    with pytest.raises(ValueError, match="user name or password"):
        check_url("https://clerk:secret@portal.example.cn/forms/a")
    assert check_url("https://portal.example.cn/forms/a?next=a@b") .endswith("a@b")


def test_values_an_earlier_attempt_placed_count_unless_they_changed(catalog_business,
                                                                     tmp_path):
    from si_agent.executor.base import JobContext
    from si_agent.executor.rpa import RpaOptions
    from si_agent.executor.rpa.guarded import GuardedJob
    from si_agent.executor.rpa.trace import FILLED, UNFILLED, Trace

    business = catalog_business("unemployment_benefit")
    values = {"id_number": "330122196303150178", "name": "张伟", "phone": "13800138001",
              "separation_date": "2026-10-31", "separation_reason": "劳动合同期满终止",
              "bank_card": "6222021202004568821"}

    def job(values, resume):
        return GuardedJob(business, values, RpaOptions(url="http://127.0.0.1:1/f"), None,
                          Trace(tmp_path / "j", tmp_path / "d.json"), None,
                          JobContext(id="j", resume=resume), None, None)

    first = job(values, {})
    assert first._left_out() == list(values)  # nothing placed yet
    first.taken = {k: control(k) for k in ("id_number", "name", "phone")}  # page 1
    assert first._left_out() == ["separation_date", "separation_reason", "bank_card"]
    state = first._placed_state()
    assert set(state) == {"id_number", "name", "phone"} and "张伟" not in str(state)
    # The next attempt resumes on page 2 with a new phone number: page 1's other
    # values are in the draft, the changed one is not.
    again = job({**values, "phone": "13900139001"}, {"draft": "u", "placed": state})
    assert again._left_out() == ["phone", "separation_date", "separation_reason", "bank_card"]
    rows = {r.key: r.status for r in again._table((UNFILLED, "x"))}
    assert rows == {"id_number": FILLED, "name": FILLED, "phone": UNFILLED,
                    "separation_date": UNFILLED, "separation_reason": UNFILLED,
                    "bank_card": UNFILLED}
    assert job({**values, "name": None}, {})._given() == [k for k in values if k != "name"]
