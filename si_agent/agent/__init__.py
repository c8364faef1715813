"""A browser agent: perception → decision → executor → result observer, in a loop.

    agent = Agent(DomPerception(), FormPolicy())
    result = agent.run(page, Goal(task="办理社保关系转移", values={...}, labels={...}))

Each part is a small protocol and can be replaced on its own: perception (DOM
accessibility snapshot, screenshot, or both), the decider (the offline
``FormPolicy`` or any OpenAI-compatible model), the executor (Playwright, no AI)
and the observer (mechanical checks). See ``loop`` for the loop itself.
"""

from si_agent.agent.decision import Decider, FormPolicy, ModelDecider
from si_agent.agent.executor import ActionRunner
from si_agent.agent.loop import Agent, AgentResult
from si_agent.agent.models import Element, Goal, Observation, Record, Step, View
from si_agent.agent.observer import ModelCheck, ResultObserver
from si_agent.agent.perception import Combined, DomPerception, Perception, ScreenshotPerception

__all__ = [
    "ActionRunner", "Agent", "AgentResult", "Combined", "Decider", "DomPerception", "Element",
    "FormPolicy", "Goal", "ModelCheck", "ModelDecider", "Observation", "Perception", "Record",
    "ResultObserver", "ScreenshotPerception", "Step", "View",
]
