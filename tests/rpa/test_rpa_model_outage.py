"""The browser agent's model goes through ``ChatModel``: when the model is down, the
decider raises ``ModelUnavailable`` (after the configured retries, each request
counted) and the rpa job fails as "the model is down", retryable, with nothing
submitted, not as "the portal is down"."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from si_agent.agent import ModelDecider
from si_agent.agent.models import Goal, View
from si_agent.errors import ExecutorError, ModelUnavailable
from si_agent.executor import JobContext, texts
from si_agent.executor.rpa import RpaExecutor, RpaOptions
from si_agent.testing import FakeOpenAI
from tests.rpa.test_rpa_agent_handover import VALUES, site  # noqa: F401  (the fixture)


@pytest.fixture
def down_model() -> Iterator[FakeOpenAI]:
    """A model endpoint that answers every request with HTTP 500 (nothing scripted)."""
    with FakeOpenAI() as fake:
        yield fake


def test_a_model_outage_raises_model_unavailable_with_the_requests_counted(down_model):
    decider = ModelDecider(down_model.chat_model(llm_max_retries=1))
    with pytest.raises(ModelUnavailable, match="HTTP 500") as failed:
        decider.decide(Goal(task="办理"), View(url="http://portal/form"), [])
    assert failed.value.usage.model_calls == 2 == len(down_model.requests)
    assert decider.calls == 2 and decider.usage.model_calls == 2


def test_a_model_outage_is_no_portal_outage(site, down_model, tmp_path, chromium,  # noqa: F811
                                            catalog):
    url, received = site
    decider = ModelDecider(down_model.chat_model(llm_max_retries=1))
    executor = RpaExecutor(tmp_path, chromium=chromium, decider=decider)
    try:
        with pytest.raises(ExecutorError) as failed:  # 姓名 needs the agent, whose model is down
            executor.run(catalog["social_transfer"], VALUES, idempotency_key="o" * 32,
                         options=RpaOptions(url=url), job=JobContext(id="outage"))
    finally:
        executor.close()
    assert failed.value.message == texts.RPA_MODEL_DOWN != texts.RPA_PORTAL_DOWN
    assert failed.value.retryable and not received
    assert len(down_model.requests) == 2  # the first request and the one retry
    log = (tmp_path / "outage" / "actions.log").read_text("utf-8")
    assert "the agent takes over" in log and "model unavailable" in log
