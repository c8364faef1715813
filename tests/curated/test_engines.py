"""Both engines answer from the curated answers: the rule engine's question, the model's
``answer_question`` call and its free text alike (a fake OpenAI-compatible server)."""

from __future__ import annotations

from pathlib import Path

import pytest

from si_agent.app import build_controller
from si_agent.config.settings import Settings
from si_agent.curated import Draft

ROOT = Path(__file__).resolve().parents[2]
ANSWER = "请带身份证到就近的社保经办窗口申请。\n来源：《市人社局常见问题》（2025年6月）"


def _controller(tmp_path, **changes):
    settings = Settings(business_dir=ROOT / "businesses", knowledge="none", data_dir=tmp_path,
                        session_store="memory", **changes)
    controller = build_controller(settings)
    controller.knowledge.book.add(Draft(
        question="失业金怎么领", paraphrases=["失业金咋领"], answer="请带身份证到就近的社保经办窗口申请。",
        source="市人社局常见问题", as_of="2025-06"), "alice")
    return controller


def test_the_rule_engine(tmp_path):
    controller = _controller(tmp_path, engine="rules")
    assert ANSWER in controller.handle("s1", "请问失業金怎麼領？").reply
    [answer] = controller.knowledge.book.all()
    assert answer.hits == 1


@pytest.mark.parametrize("model_says", [
    {"tool_calls": [{"name": "answer_question", "arguments": {"question": "失业金咋领"}}]},
    {"content": "失业金需要先办理失业登记，然后……（模型自己写的）"},  # free text: curated wins
])
def test_the_model_engine(tmp_path, fake, model_says):
    controller = _controller(tmp_path, engine="llm", llm_base_url=fake.base_url,
                             llm_timeout=2.0, llm_max_retries=0)
    fake.push(model_says)
    reply = controller.handle("s1", "失业金咋领").reply
    assert ANSWER in reply and "模型自己写的" not in reply


def test_without_a_knowledge_base_the_models_own_text_answers_the_rest(tmp_path, fake):
    controller = _controller(tmp_path, engine="llm", llm_base_url=fake.base_url,
                             llm_timeout=2.0, llm_max_retries=0)
    fake.push({"content": "灵活就业人员可以按月或按年缴纳养老保险。"})
    reply = controller.handle("s1", "灵活就业怎么交养老保险").reply
    assert "灵活就业人员可以按月或按年缴纳养老保险。" in reply
