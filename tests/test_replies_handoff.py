"""The contact citizens are sent to for a person is the setting SI_HANDOFF_TEXT:
no reply template names the 12333 hotline itself."""

from __future__ import annotations

from pathlib import Path

import pytest

from si_agent import replies
from si_agent.config.assistant import load_assistant_texts
from si_agent.config.settings import DEFAULT_HANDOFF

ROOT = Path(__file__).resolve().parents[1]
# ESCALATE is followed by the hand-off ticket's text, which names the contact
# (HANDOFF_OFF_HOURS, HANDOFF_NOBODY, HANDOFF_BUSY, HANDOFF_LOST).
HANDOFF_TEMPLATES = ("EXEC_REFUSED", "JOB_UNKNOWN", "BUSINESS_UNAVAILABLE",
                     "NO_ANSWER_TEMPLATE", "HANDOFF_OFF_HOURS", "HANDOFF_NOBODY", "HANDOFF_BUSY",
                     "HANDOFF_LOST")


def test_no_template_hard_codes_the_hotline():
    templates = {name: value for name, value in vars(replies).items()
                 if name.isupper() and isinstance(value, str)
                 and name not in ("NO_ANSWER", "DEFAULT_HANDOFF")}
    assert not [name for name, text in templates.items() if "12333" in text]
    texts = load_assistant_texts(ROOT / "businesses")
    assert not [k for k, v in texts.model_dump().items() if "12333" in str(v)]


@pytest.mark.parametrize("name", HANDOFF_TEMPLATES)
def test_the_handoff_templates_name_the_setting(name):
    template = getattr(replies, name)
    assert "{handoff}" in template
    local = replies.render(template, name="社保卡申领", label="身份证号", attempts=3,
                           message="信息有误", handoff="当地人社服务窗口（0571-12345）")
    assert "当地人社服务窗口（0571-12345）" in local and "12333" not in local
    assert DEFAULT_HANDOFF in replies.render(template)  # the default contact otherwise


def test_the_text_added_as_it_stands_carries_the_default_contact():
    assert replies.NO_ANSWER == replies.render(replies.NO_ANSWER_TEMPLATE, handoff=DEFAULT_HANDOFF)
