"""Web-form businesses end to end: a dialogue collects the fields, the rpa executor
fills the demo portal's form in Chromium, and what the form refuses comes back to
the dialogue as fields to ask again, on the same draft (one application)."""

from __future__ import annotations

import json

import pytest

from si_agent.errors import ExecutorError
from si_agent.executor import JobContext, texts
from si_agent.executor.rpa import RpaExecutor
from tests.rpa.conftest import applications, fault, settle, talk

ZHANG = ("张伟", "330122196303150178")


def test_social_transfer_with_a_per_field_failure_loop(ctl, fresh_portal, settings):
    turn = talk(ctl, "我要把社保从杭州转到拉萨", ZHANG[1], "张三", "确认")
    assert turn.state == "executing"
    turn = settle(ctl)
    # The form's own reasons, for just the fields it refused.
    assert (turn.state, turn.awaiting) == ("collecting", "name"), turn.notice
    assert "姓名与身份证号不一致" in turn.notice and "该城市暂未开通线上转移" in turn.notice
    status = {f.key: f.status for f in turn.fields}
    assert status["name"] == status["to_city"] == "failed"
    assert status["from_city"] == status["id_number"] == "collected"
    assert applications(fresh_portal) == []
    talk(ctl, "张伟", "苏州")
    turn = talk(ctl, "确认")
    turn = settle(ctl)
    assert turn.state == "done", turn.notice
    [app] = applications(fresh_portal)  # the refused draft continued: one application
    assert turn.result["application_no"] == app["application_no"]
    assert app["values"]["name"] == "张伟" and app["values"]["to_city"] == "苏州市"
    assert "受理编号：" + app["application_no"] in turn.notice
    job_dirs = [p for p in (settings.data_dir / "rpa").iterdir() if p.name != "drafts"]
    assert len(job_dirs) == 2
    for trace in job_dirs:  # a trace per job: actions, per-field table, screenshots
        assert (trace / "actions.log").is_file() and list(trace.glob("*.png"))
        assert ZHANG[1] not in (trace / "actions.log").read_text("utf-8")
    drafts = {json.loads(p.read_text())["draft"] for p in (settings.data_dir / "rpa" /
                                                         "drafts").glob("*.json")}
    assert len(drafts) == 1 and app["draft_id"] in drafts.pop()


def test_card_apply(ctl, fresh_portal):
    talk(ctl, "我要申请社保卡", *ZHANG, "13800138001", "建行", "浙江省杭州市西湖区文三路100号")
    turn = settle(ctl) if ctl.handle("u", "确认").state == "executing" else None
    assert turn is not None and turn.state == "done", turn and turn.notice
    [app] = applications(fresh_portal)
    assert app["values"]["bank"] == "中国建设银行"
    assert app["values"]["mailing_address"] == "浙江省杭州市西湖区文三路100号"


def test_unemployment_benefit_on_two_pages_with_an_unsupported_card(ctl, fresh_portal):
    talk(ctl, "我要申领失业金", ZHANG[1], ZHANG[0], "13800138001", "2026-10-31",
         "合同到期", "6214830571234567896", "确认")
    turn = settle(ctl)
    assert (turn.state, turn.awaiting) == ("collecting", "bank_card"), turn.notice
    assert "银行卡不支持" in turn.notice
    talk(ctl, "6222021202004568821", "确认")
    turn = settle(ctl)
    assert turn.state == "done", turn.notice
    [app] = applications(fresh_portal)
    assert app["values"]["separation_reason"] == "劳动合同期满终止"
    assert app["values"]["separation_date"] == "2026-10-31"


def test_medical_filing_radio_and_date(ctl, fresh_portal):
    talk(ctl, "我要办异地就医备案", ZHANG[1], ZHANG[0], "杭州", "北京", "临时外出就医",
         "2026-12-10")
    turn = talk(ctl, "确认")
    turn = settle(ctl)
    assert turn.state == "done", turn.notice
    [app] = applications(fresh_portal)
    assert app["values"]["filing_type"] == "临时外出就医"
    assert app["values"]["start_date"] == "2026-12-10"
    assert app["values"]["destination_city"] == "北京市"


def test_a_portal_error_is_retried_without_a_second_application(ctl, fresh_portal):
    fault(fresh_portal, status=500, after=True)  # the application is made, the answer is lost
    talk(ctl, "我要把社保从杭州转到苏州", ZHANG[1], ZHANG[0], "确认")
    turn = settle(ctl)
    assert (turn.state, turn.awaiting) == ("failed", "retry"), turn.notice
    assert texts.RPA_PORTAL_DOWN in turn.notice
    assert len(applications(fresh_portal)) == 1
    talk(ctl, "重试")
    turn = settle(ctl)
    assert turn.state == "done", turn.notice  # read from the draft, not submitted again
    [app] = applications(fresh_portal)
    assert turn.result["application_no"] == app["application_no"]


def test_a_draft_submitted_with_other_values_is_not_this_submissions_success(ctl, fresh_portal):
    """The portal took the first submission but its answer was lost; the citizen then
    changed a value and confirmed again. The draft shows the earlier application's
    number: that is the application of the old values, not of the new ones, and the
    citizen is told so, never "已提交" for what the portal does not hold."""
    fault(fresh_portal, status=500, after=True)  # the application is made, the answer is lost
    talk(ctl, "我要把社保从杭州转到苏州", ZHANG[1], ZHANG[0], "确认")
    turn = settle(ctl)
    assert (turn.state, turn.awaiting) == ("failed", "retry"), turn.notice
    [app] = applications(fresh_portal)
    talk(ctl, "修改转入城市", "上海", "确认")
    turn = settle(ctl)
    assert turn.state == "failed", turn.notice
    assert app["application_no"] in turn.notice and "修改前" in turn.notice, turn.notice
    assert "未受理" not in turn.notice and not turn.result, (turn.notice, turn.result)
    assert applications(fresh_portal) == [app]  # nothing sent twice, the old values stand
    turn = talk(ctl, "重试")  # not offered for retry: nothing runs, nothing is sent
    assert settle(ctl).state == "failed" and not settle(ctl).result, turn.reply
    assert applications(fresh_portal) == [app]


def test_a_changed_form_keeps_the_collected_fields(ctl, fresh_portal, monkeypatch):
    # Version 2 of the form asks for 联系电话, which this business does not collect.
    monkeypatch.setenv("SI_PORTAL_URL", fresh_portal)
    business = ctl.catalog["social_transfer"]
    options = business.api.options | {"url": "${SI_PORTAL_URL}/forms/social_transfer?v=2"}
    ctl.catalog.replace(business.model_copy(
        update={"api": business.api.model_copy(update={"options": options})}))
    talk(ctl, "我要把社保从杭州转到苏州", ZHANG[1], ZHANG[0], "确认")
    turn = settle(ctl)
    assert turn.state == "failed" and turn.awaiting is None, turn.notice
    assert "联系电话" in turn.notice  # named, in the citizen's terms
    assert {f.key: f.status for f in turn.fields} == dict.fromkeys(
        ["from_city", "to_city", "id_number", "name"], "collected")
    assert applications(fresh_portal) == []


def run_direct(settings, business, values, on_progress=None, **options):
    """The executor alone, as ``si-agent rpa run`` uses it."""
    from si_agent.executor import Executors

    executor = RpaExecutor(settings.data_dir / "rpa", chromium=settings.rpa_chromium)
    opts = Executors(settings).options(business).model_copy(update=options)
    progress: list[str] = []

    def report(text: str) -> None:
        progress.append(text)
        if on_progress:
            on_progress(text)

    try:
        return executor.run(business, values, idempotency_key="k" * 32, options=opts,
                            progress=report, job=JobContext(id="direct")), progress
    finally:
        executor.close()


def test_the_portal_logging_out_mid_job_is_handled(ctl, settings, fresh_portal):
    import httpx

    business = ctl.catalog["unemployment_benefit"]
    values = {"id_number": ZHANG[1], "name": ZHANG[0], "phone": "13800138001",
              "separation_date": "2026-10-31", "separation_reason": "劳动合同期满终止",
              "bank_card": "6222021202004568821"}

    def expire_once(text: str) -> None:  # while page 1 is filled: 下一步 meets the login page
        if text.startswith("正在填写 1/") and not expired:
            expired.append(httpx.post(fresh_portal + "/_admin/expire_sessions"))

    expired: list = []
    result, progress = run_direct(settings, business, values, on_progress=expire_once)
    assert expired and result["application_no"].startswith("SI")
    assert len(applications(fresh_portal)) == 1
    log = (settings.data_dir / "rpa" / "direct" / "actions.log").read_text("utf-8")
    assert log.count("logged in") == 2 and "logged out by the portal" in log
    assert progress[0] == texts.RPA_OPENING and texts.RPA_SUBMITTING in progress


def test_a_portal_that_does_not_answer_in_time(ctl, settings, fresh_portal):
    fault(fresh_portal, delay=4.0)
    business = ctl.catalog["social_transfer"]
    values = {"from_city": "杭州市", "to_city": "苏州市", "id_number": ZHANG[1], "name": ZHANG[0]}
    with pytest.raises(ExecutorError) as failed:
        run_direct(settings, business, values, action_timeout=1.5)
    assert failed.value.message == texts.RPA_PORTAL_DOWN and failed.value.retryable
    assert failed.value.resume["draft"].startswith(fresh_portal + "/forms/social_transfer/drafts/")


def test_staff_try_a_form_from_the_command_line(settings, fresh_portal, monkeypatch, capsys):
    from si_agent.cli import main

    monkeypatch.setenv("SI_BUSINESS_DIR", str(settings.business_dir))
    monkeypatch.setenv("SI_DATA_DIR", str(settings.data_dir))
    values = {"from_city": "杭州市", "to_city": "拉萨市", "id_number": ZHANG[1], "name": ZHANG[0]}
    assert main(["rpa", "run", "social_transfer", "--values", json.dumps(values)]) == 1
    out = capsys.readouterr().out
    assert "填写失败\t转入地\tto_city\t该城市暂未开通线上转移" in out
    assert "填写成功\t姓名\tname\t" in out
    assert main(["rpa", "run", "social_transfer", "--values", "{not json"]) == 2
    assert main(["rpa", "run", "pension_query", "--values", "{}"]) == 2


def test_a_value_no_option_means_is_refused_before_sending(ctl, settings, fresh_portal):
    values = {"name": ZHANG[0], "id_number": ZHANG[1], "phone": "13800138001",
              "bank": "招商银行", "mailing_address": "浙江省杭州市西湖区文三路100号"}
    with pytest.raises(ExecutorError) as refused:
        run_direct(settings, ctl.catalog["card_apply"], values)
    assert set(refused.value.field_errors) == {"bank"}
    assert refused.value.field_errors["bank"].startswith("办理网站上只能选择：中国工商银行")
    assert applications(fresh_portal) == []


def test_a_refused_login_is_said_once_in_the_log_and_the_trace(ctl, fresh_portal, settings,
                                                             monkeypatch, caplog):
    # A wrong SI_PORTAL_PASSWORD: the citizen is told to contact staff, the operator
    # finds why in the log (there was no line), and the trace no longer says "logged in".
    import logging

    monkeypatch.setenv("SI_PORTAL_PASSWORD", "wrong-password")
    with caplog.at_level(logging.WARNING):
        talk(ctl, "我要把社保从杭州转到苏州", ZHANG[1], ZHANG[0], "确认")
        turn = settle(ctl)
    assert turn.state == "failed" and "无法登录办理网站" in turn.notice
    [line] = [r.getMessage() for r in caplog.records if "refused the login" in r.getMessage()]
    assert line == ("rpa: social_transfer: the portal refused the login; check the account "
                    "in SI_PORTAL_USER and SI_PORTAL_PASSWORD")
    [trace] = [p for p in (settings.data_dir / "rpa").iterdir() if p.name != "drafts"]
    actions = (trace / "actions.log").read_text("utf-8")
    assert "the portal refused the login" in actions and "logged in" not in actions
    assert applications(fresh_portal) == []
