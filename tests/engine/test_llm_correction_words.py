"""A model's values pass the same guard as the rules': correction words are never stored."""

from __future__ import annotations

from si_agent.engine.llm import LLMEngine

from .conftest import make


def test_a_model_value_with_a_correction_frame_stores_the_new_value(catalog, settings, fake):
    ctl = make(catalog, settings, LLMEngine(catalog, settings))
    fake.push({"tool_calls": [{"name": "match_business",
                               "arguments": {"business_id": "card_apply"}}]})
    ctl.handle("u", "我要办社保卡")
    fake.push({"tool_calls": [{"name": "provide_field",
                               "arguments": {"values": {"name": "还是改回张伟吧"}}}]})
    ctl.handle("u", "哎不对不对 还是改回张伟吧")
    assert ctl.store.load("u").fields["name"].value == "张伟"


def test_a_model_value_that_is_only_a_frame_is_not_stored(catalog, settings, fake):
    ctl = make(catalog, settings, LLMEngine(catalog, settings))
    fake.push({"tool_calls": [{"name": "match_business",
                               "arguments": {"business_id": "card_apply"}}]})
    ctl.handle("u", "我要办社保卡")
    fake.push({"tool_calls": [{"name": "provide_field",
                               "arguments": {"values": {"name": "不对不对"}}}]})
    turn = ctl.handle("u", "不对不对")
    name = ctl.store.load("u").fields.get("name")
    assert name is None or name.status != "collected"
    assert turn.state == "collecting"
