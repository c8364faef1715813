"""The audit log of web-form (rpa) submissions: each run of the executor in Chromium
and each outcome, with the portal's application number; a retry after a lost answer
is audited as a second run, and the portal still holds one application."""

from __future__ import annotations

from si_agent.executor import texts
from tests.rpa.conftest import applications, fault, settle, talk

ID, NAME = "330122196303150178", "张伟"


def test_rpa_submissions_and_outcomes_are_audited(ctl, fresh_portal, settings):
    fault(fresh_portal, status=500, after=True)  # the application is made, the answer is lost
    talk(ctl, "我要把社保从杭州转到苏州", ID, NAME, "确认")
    turn = settle(ctl)
    assert (turn.state, turn.awaiting) == ("failed", "retry"), turn.notice
    talk(ctl, "重试")
    turn = settle(ctl)
    assert turn.state == "done", turn.notice
    [app] = applications(fresh_portal)
    number = app["application_no"]

    entries = list(reversed(ctl.audit.query()))  # oldest first
    assert [(e.event, e.state or e.channel, e.outcome, e.application_no) for e in entries] == [
        ("state", "executing", "running", None),
        ("submission", "rpa", "failed", None),
        ("state", "failed", "failed", None),
        ("state", "executing", "running", None),
        ("submission", "rpa", "succeeded", number),
        ("state", "done", "succeeded", number),
    ]
    assert texts.RPA_PORTAL_DOWN in entries[1].detail
    assert entries[0].job_id == entries[2].job_id != entries[3].job_id == entries[5].job_id
    assert {e.user for e in entries} == {ctl.audit.user_ref("u")}
    assert {e.values["id_number"] for e in entries} == {"3301**********0178"}
    assert {e.values["name"] for e in entries} == {"张*"}
    stored = b"".join(p.read_bytes() for p in settings.data_dir.glob("audit.db*"))
    assert stored and ID.encode() not in stored and NAME.encode() not in stored
