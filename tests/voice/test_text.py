"""Transcripts are normalised before the turn (simplified characters, long numbers
as digits) and the recognition prompt names the businesses and the awaited field."""

from __future__ import annotations

from pathlib import Path

import pytest

from si_agent.config.loader import load_businesses
from si_agent.voice.normalise import transcript
from si_agent.voice.prompt import MAX_CHARS, recognition_prompt

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(("heard", "text"), [
    ("我要辦理社保卡申領", "我要办理社保卡申领"),
    ("我的手機號是138 0013 8000。", "我的手机号是13800138000。"),
    ("138-0013-8000", "13800138000"),
    ("身份證號 330122 19630315 0178", "身份证号 330122196303150178"),
    ("幺三八零零幺三八零零零", "13800138000"),
    ("三三零一二二一九六三零三一五零一七八", "330122196303150178"),
    ("2025-03-01离职", "2025-03-01离职"),  # a date keeps its dashes
    ("交了十二年", "交了十二年"),  # a numeral with 十 is no long number
])
def test_normalised(heard, text):
    pytest.importorskip("opencc", reason="needs the voice extra (OpenCC)")
    assert transcript(heard) == text


def test_a_repeated_prompt_is_nothing_heard():
    prompt = "社会保险，社保卡申领，申领社保卡，申请社保卡。身份证号："
    assert transcript("申领社保卡，申请社保卡。", prompt) == ""
    assert transcript("社保卡申领", prompt) == "社保卡申领"  # said: a business name
    assert transcript("对", "号码是这个，对吗？对。不对。是的。") == "对"


@pytest.fixture(scope="module")
def catalog():
    return load_businesses(ROOT / "businesses")


def test_prompt_names_businesses_at_rest(catalog):
    prompt = recognition_prompt(catalog.values())
    assert prompt.startswith("社会保险，社保卡申领，") and "失业保险金申领" in prompt
    assert len(prompt) <= MAX_CHARS


def test_prompt_ends_with_the_awaited_field(catalog):
    business = catalog["card_apply"]
    prompt = recognition_prompt(catalog.values(), business, business.field("id_number"))
    assert prompt == "社会保险，社保卡申领，申领社保卡，申请社保卡。身份证号："


def test_the_awaited_label_echoed_over_silence_is_nothing_heard():
    prompt = "社保关系转移：转出城市、转入城市。身份证号："
    assert transcript("证号", prompt) == ""  # Whisper on 2 s of silence, mid-business
    assert transcript("身份证号。", prompt) == ""
    assert transcript("张伟", "社保卡申领。姓名：") == "张伟"
    assert transcript("330122196303150178", prompt) == "330122196303150178"
