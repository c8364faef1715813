"""Test doubles for the outside world, shipped so tests exercise the real clients."""

from si_agent.testing.fake_openai import FakeOpenAI
from si_agent.testing.steps import FakeCardReader, FakeFaceMatcher, FakeIdPhoto, fake_step_handlers

__all__ = ["FakeCardReader", "FakeFaceMatcher", "FakeIdPhoto", "FakeOpenAI", "fake_step_handlers"]
