"""The browser agent's task suite (tests/agent/tasks.yaml) on the demo portal.

Every task runs twice, with ``DomPerception`` and each decider:

- ``FormPolicy``, the offline deterministic decider;
- a scripted model: ``ModelDecider`` through the real ``openai`` client and HTTP
  to ``FakeOpenAI``, whose answer for each request is the step ``FormPolicy``
  chooses on the same goal, view and memory (``ScriptedModel``). This checks the
  model path itself: the tool schema it sends, that personal numbers reach the
  model only as ``{{key}}`` placeholders, that the step it parses from the answer
  acts the same, and that no call is wasted.

Each run asserts the task's whole expected outcome (see ``problems``): success
with its output and exactly one new application holding the expected values, or
a failure naming what is missing or refused, with no application. Tasks marked
``xfail`` in the file fail because of a known agent bug (strict: a fix shows up).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from si_agent.agent import FormPolicy, Step
from si_agent.testing.agent_suite import SENSITIVE_KEYS, ScriptedModel, Task, load_tasks, problems
from si_agent.testing.agent_suite import run_task as run

pytestmark = pytest.mark.browser

TASKS = load_tasks(Path(__file__).with_name("tasks.yaml"))
POLICY_ACTIONS: dict[str, list[str]] = {}  # task id -> the action types FormPolicy took


def _params() -> list:
    return [pytest.param(t, id=t.id, marks=[pytest.mark.xfail(reason=t.xfail, strict=True)]
                         if t.xfail else []) for t in TASKS]


def test_the_suite_covers_what_it_should():
    assert len(TASKS) >= 20
    assert {t.business for t in TASKS if t.expect.success} == {
        "social_transfer", "card_apply", "unemployment_benefit", "medical_filing"}
    assert any(t.start == "/" for t in TASKS) and any("v=2" in t.start for t in TASKS)
    assert any(t.expect.missing for t in TASKS) and any(t.expect.failed for t in TASKS)
    assert any(t.setup.submitted is not None for t in TASKS) and any(t.setup.fault for t in TASKS)


@pytest.mark.parametrize("task", _params())
def test_task_with_the_form_policy(task: Task, page, suite_portal, tmp_path):
    outcome = run(page, suite_portal, task, FormPolicy(), trace_dir=tmp_path / task.id)
    POLICY_ACTIONS[task.id] = [r.step.action.type for r in outcome.result.steps]
    assert not problems(task, outcome), (problems(task, outcome), tmp_path / task.id)


@pytest.mark.parametrize("task", _params())
def test_task_with_a_scripted_model(task: Task, page, suite_portal, fake_model, tmp_path):
    fake, _ = fake_model
    fake.clear()
    first = len(fake.requests)
    decider = ScriptedModel(fake, fake.chat_model("scripted-form-policy", llm_max_retries=0,
                                                  llm_timeout=10.0))
    outcome = run(page, suite_portal, task, decider, trace_dir=tmp_path / task.id)
    bodies = fake.requests[first:]

    # Every request offers the one tool, Step's schema, and forces it.
    for body in bodies:
        [tool] = body["tools"]
        assert tool["function"]["name"] == "next_step"
        assert tool["function"]["parameters"] == Step.model_json_schema()
        assert body["tool_choice"] == {"type": "function", "function": {"name": "next_step"}}
    # Personal numbers only as placeholders.
    sent = "\n".join(json.dumps(b, ensure_ascii=False) for b in bodies)
    for key in SENSITIVE_KEYS:
        if key in task.goal.values:
            assert task.goal.values[key] not in sent, f"{key} reached the model"
            assert "{{" + key + "}}" in sent
    # No wasted call: one request per step dictated, one step per request.
    steps = outcome.result.steps
    assert decider.model.calls == len(bodies) == decider.dictated == len(steps)
    assert fake.pending == 0 and fake.unscripted == 0
    # The same outcome as the policy (and the same actions, when it ran in this session).
    assert not problems(task, outcome), (problems(task, outcome), tmp_path / task.id)
    if task.id in POLICY_ACTIONS:
        assert [r.step.action.type for r in steps] == POLICY_ACTIONS[task.id]
