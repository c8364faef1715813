"""``fields: discover``: the fields come from the web form (here the portal's redesigned
v2 social_transfer form, labels the business never declared and one more field),
are cached with the form's hash, re-read when the form changes, and printed by
``si-agent rpa discover`` and ``si-agent validate``."""

from __future__ import annotations

import json

import pytest

from si_agent.app import build_controller
from si_agent.cli import main
from si_agent.config.settings import Settings
from tests.rpa.conftest import applications, settle, talk

BUSINESS = """\
id: web_transfer
name: 社保关系转移（网上办事大厅）
type: handle
description: 在网上办事大厅填写社保关系转移申请。
keywords: [网上转移社保, 网上办转移]
fields: discover
field_overrides:
  联系电话: {prompt: 请提供您的11位手机号码，办理结果会短信通知您。}
require_confirm: true
api:
  kind: rpa
  options:
    url: ${SI_PORTAL_URL}/forms/social_transfer?v=2
    login:
      url: ${SI_PORTAL_URL}/login
      user_env: SI_PORTAL_USER
      password_env: SI_PORTAL_PASSWORD
    fixed: {证件类型: 居民身份证, 我已阅读并同意承诺书: true}
  result_template: 已在网上办事大厅提交，受理编号：{application_no}。
"""


@pytest.fixture
def discovering(tmp_path, chromium) -> Settings:
    directory = tmp_path / "businesses"
    directory.mkdir()
    (directory / "web_transfer.yaml").write_text(BUSINESS, "utf-8")
    return Settings(business_dir=directory, data_dir=tmp_path / "data", session_store="sqlite",
                    knowledge="none", rpa_chromium=chromium)


def cache(settings: Settings) -> dict:
    return json.loads((settings.data_dir / "rpa" / "forms" / "web_transfer.json").read_text())


def test_a_discovered_form_is_a_whole_business(discovering, fresh_portal):
    ctl = build_controller(discovering, engine="rules")
    assert ctl.catalog["web_transfer"].fields == ()  # nothing declared
    turn = talk(ctl, "我要网上转移社保")
    assert turn.state == "collecting", turn.reply
    assert [(f.key, f.label) for f in turn.fields] == [
        ("name", "申请人姓名"), ("id_number", "证件号码"), ("phone", "联系电话"),
        ("from_city", "原参保地"), ("to_city", "新参保地")]
    assert "请提供申请人姓名" in turn.reply
    turn = talk(ctl, "张伟", "330122196303150178")
    assert "请提供您的11位手机号码" in turn.reply  # the staff's override
    turn = talk(ctl, "13800138001", "杭州", "苏州")
    assert turn.state == "confirming", turn.reply
    assert talk(ctl, "确认").state == "executing"
    done = settle(ctl)
    assert done.state == "done", done.notice
    [app] = applications(fresh_portal)
    assert app["values"]["phone"] == "13800138001" and app["values"]["to_city"] == "苏州市"
    ctl.runner.shutdown()



def test_the_cache_serves_a_restart_and_a_changed_form_is_read_again(discovering, fresh_portal):
    first = build_controller(discovering, engine="rules")
    talk(first, "我要网上转移社保", "张伟")
    cached = cache(discovering)
    assert [f["key"] for f in cached["fields"]][:2] == ["name", "id_number"]
    first.runner.shutdown()
    # A restart mid-flow: the new process takes the fields from the cache.
    second = build_controller(discovering, engine="rules")
    turn = talk(second, "330122196303150178", "13800138001", "杭州", "苏州")
    assert turn.state == "confirming", turn.reply
    # The form changed since (simulated: the cached hash no longer fits): read again.
    path = discovering.data_dir / "rpa" / "forms" / "web_transfer.json"
    path.write_text(json.dumps({**cached, "hash": "stale"}), "utf-8")
    talk(second, "确认")
    assert settle(second).state == "done"
    assert cache(discovering)["hash"] == cached["hash"]
    second.runner.shutdown()


def test_discover_and_validate_print_what_was_inferred(discovering, fresh_portal, capsys,
                                                       monkeypatch):
    monkeypatch.setenv("SI_BUSINESS_DIR", str(discovering.business_dir))
    monkeypatch.setenv("SI_DATA_DIR", str(discovering.data_dir))
    monkeypatch.setenv("SI_RPA_CHROMIUM", discovering.rpa_chromium)
    assert main(["validate"]) == 0
    assert "web_transfer: fields: discover; not read from the form yet" in capsys.readouterr().out
    url = fresh_portal + "/forms/social_transfer?v=2"
    assert main(["rpa", "discover", url, "--business", "web_transfer"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"# 5 required fields of {url}")
    assert "- key: phone\n  label: 联系电话\n  type: phone" in out
    assert "  - value: 苏州市\n    aliases:\n    - 苏州" in out
    assert main(["validate"]) == 0
    assert ("web_transfer: fields discovered from " + url + ": name (申请人姓名, name), "
            "id_number (证件号码, idcard), phone (联系电话, phone)") in capsys.readouterr().out


class Held:
    """A job runner that keeps the jobs, as a queue would for another process."""

    def __init__(self) -> None:
        self.jobs: list[str] = []

    def submit(self, job_id, work) -> None:
        self.jobs.append(job_id)


def test_a_worker_that_never_saw_the_form_runs_the_job(discovering, fresh_portal):
    from si_agent.jobs.model import this_process

    held = Held()
    api = build_controller(discovering, engine="rules")
    api.runner = held
    talk(api, "我要网上转移社保", "张伟", "330122196303150178", "13800138001", "杭州", "苏州")
    assert talk(api, "确认").state == "executing" and len(held.jobs) == 1
    worker = build_controller(discovering, engine="rules")  # a fresh process: no fields yet
    assert worker.catalog["web_transfer"].fields == ()
    assert worker.driver.run_handed_over(held.jobs[0], this_process())
    turn = api.current("u")
    assert turn.state == "done", turn.notice
    job = api.jobs.load(held.jobs[0])
    # The draft was on the job record before anything was sent: any machine reruns it.
    assert job.resume["draft"].startswith(fresh_portal + "/forms/social_transfer/drafts/")
    worker.runner.shutdown()
    api.runner = None


def test_discover_a_form_without_a_business(discovering, fresh_portal, capsys, monkeypatch):
    monkeypatch.setenv("SI_RPA_CHROMIUM", discovering.rpa_chromium)
    assert main(["rpa", "discover", fresh_portal + "/forms/card_apply"]) == 0
    out = capsys.readouterr().out
    assert "- key: mailing_address\n  label: 邮寄地址\n  type: text" in out
    assert "- key: bank\n  label: 合作银行\n  type: enum" in out


@pytest.mark.parametrize("engine", ["rules", "llm"])
def test_values_in_the_first_message_are_kept_when_the_form_is_read(
        discovering, fresh_portal, engine, request):
    """Regression: the engine decided before the form's fields were known, so values
    stated with the request were dropped."""
    if engine == "llm":  # the model names the business only, as in idle it is offered no more
        fake = request.getfixturevalue("fake")
        fake.push({"tool_calls": [{"name": "match_business",
                                   "arguments": {"business_id": "web_transfer"}}]})
        discovering = discovering.model_copy(update={"llm_base_url": fake.base_url})
    ctl = build_controller(discovering, engine=engine)
    assert ctl.catalog["web_transfer"].fields == ()  # not read yet
    turn = talk(ctl, "我要网上转移社保，从杭州转走，手机13800138001")
    assert turn.state == "collecting", turn.reply
    got = {f.key: f.value for f in turn.fields if f.status == "collected"}
    assert got == {"from_city": "杭州市", "phone": "138****8001"}, turn.reply
    assert "请提供申请人姓名" in turn.reply
    if engine == "llm":  # the values were read without a second model call
        assert len(fake.requests) == 1 and not fake.unscripted
    ctl.runner.shutdown()

def test_the_issues_example_keeps_the_city_given_with_the_request(discovering, fresh_portal):
    """The issue's example ("从杭州转到苏州" with the request): the value the form's
    fields let the engine place is kept (before, every value was dropped). The form's
    新参保地 has no cue word for "转到" (a discovered field carries none unless
    ``field_overrides`` gives it ``cues``), so 苏州 is asked for next."""
    ctl = build_controller(discovering, engine="rules")
    turn = talk(ctl, "我要网上转移社保，从杭州转到苏州")
    assert turn.state == "collecting", turn.reply
    got = {f.key: f.value for f in turn.fields if f.status == "collected"}
    assert got == {"from_city": "杭州市"}, (got, turn.reply)
    ctl.runner.shutdown()
