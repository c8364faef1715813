"""Test doubles for the outside world, shipped so tests exercise the real clients."""

from si_agent.testing.fake_openai import FakeOpenAI

__all__ = ["FakeOpenAI"]
