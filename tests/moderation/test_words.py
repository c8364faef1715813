"""The word list moderator: folding, actions, variants, allow-list, where it applies."""

from __future__ import annotations

from pathlib import Path

import pytest

from si_agent.moderation import Action, Moderation, WordListModerator
from si_agent.moderation.words import MASK_CHAR, fold, load_word_list

LIST = """\
categories:
  - id: abuse
    label: 辱骂
    action: mask
    words:
      - {word: 傻逼, variants: [煞笔]}
      - 王八蛋
      - sb
      - {word: 滚蛋, action: flag}
  - id: porn
    label: 色情
    action: refuse
    words: [约炮]
  - id: self_harm
    label: 自伤倾向
    action: flag
    where: [input]
    words: [不想活了]
allow: [滚蛋糕]
"""


@pytest.fixture
def moderator(tmp_path: Path) -> WordListModerator:
    path = tmp_path / "_moderation.yaml"
    path.write_text(LIST, encoding="utf-8")
    words, errors = load_word_list(path)
    assert errors == [] and words is not None
    return WordListModerator(words)


@pytest.mark.parametrize("text, masked", [
    ("你这个傻逼系统", "你这个＊＊系统"),
    ("傻 逼", "＊ ＊"),  # single characters spaced out
    ("你 这 个 傻 逼 系 统", "你 这 个 ＊ ＊ 系 统"),
    ("你这个傻😡逼系统", "你这个＊＊＊系统"),  # an emoji between the letters
    ("王八\u0301蛋\u00ad", "＊＊＊＊\u00ad"),  # a combining mark, a soft hyphen
    ("你这个傻*逼系统", "你这个＊＊＊系统"),
    ("真是個王八蛋", "真是個＊＊＊"),  # Traditional
    ("ＳＢ客服", "＊＊客服"),  # full width, upper case
    ("煞笔", "＊＊"),  # a variant
])
def test_listed_words_are_masked_however_they_are_written(moderator, text, masked):
    verdict = moderator.check(text, "input")
    assert verdict.action is Action.MASK and verdict.text == masked
    assert verdict.categories == ("abuse",)
    assert MASK_CHAR in verdict.text


@pytest.mark.parametrize("text", [
    "我的USB接口坏了",  # a Latin word of the list inside another word
    "社保卡丢了怎么补办", "我不想活得这么累", "滚蛋糕是什么",
    "电脑 王八 蛋糕店",  # a space between two words separates them
])
def test_clean_texts_pass(moderator, text):
    verdict = moderator.check(text, "input")
    assert verdict.clean and verdict.text == text and verdict.hits == ()


def test_refuse_flag_and_a_word_with_its_own_action(moderator):
    refused = moderator.check("约炮吗", "input")
    assert refused.refused and refused.action is Action.REFUSE and refused.text == "约炮吗"
    flagged = moderator.check("你给我滚蛋", "input")
    assert flagged.action is Action.FLAG and flagged.text == "你给我滚蛋"
    both = moderator.check("王八蛋，我不想活了", "input")
    assert both.masked and both.flagged and both.text == "＊＊＊，我不想活了"
    assert both.categories == ("abuse", "self_harm")


def test_where_a_category_applies(moderator):
    assert moderator.check("我不想活了", "input").flagged
    assert moderator.check("我不想活了", "output").clean  # input only
    assert moderator.check("傻逼", "output").masked


def test_fold_keeps_the_way_back_to_the_original():
    assert fold("養老 金Ａ") == ("养老 金a", [0, 1, 2, 3, 4])  # a space between words stays
    assert fold("養 老 金") == ("养老金", [0, 2, 4])  # spaced out: joined
    assert fold("養*老-金") == ("养老金", [0, 2, 4])  # fillers: left out


def test_moderation_chains_and_streams_without_sending_a_word_unmasked(moderator):
    moderation = Moderation([moderator])
    sent: list[str] = []
    feed = moderation.stream(sent.append)
    for piece in ["您好，这", "个傻", "逼问题", "我来回答：灵活就业人员可以按月缴费，", "也可以按年缴费。"]:
        feed(piece)
    streamed = "".join(sent)
    assert "傻" not in streamed and "逼" not in streamed
    assert streamed.startswith("您好，这个＊＊问题")
    final = moderation.check("您好，这个傻逼问题我来回答：灵活就业人员可以按月缴费，也可以按年缴费。",
                             "output")
    assert final.text.startswith(streamed)  # the server sends the rest, no reset


def test_fillers_between_letters_are_held_back_in_a_stream(moderator):
    sent: list[str] = []
    feed = Moderation([moderator]).stream(sent.append)
    feed("前文说明。" * 8 + "约")
    feed("-" * 60)
    feed("\u200b" * 30)
    assert "约" not in "".join(sent)
    feed("炮，后面还有很多很多的文字。" * 3)
    assert "约" not in "".join(sent) and "炮" not in "".join(sent)


def test_a_refused_stream_stops(moderator):
    sent: list[str] = []
    feed = Moderation([moderator]).stream(sent.append)
    feed("好的，" + "这是一段很长的开头，" * 5)
    before = "".join(sent)
    feed("约炮")
    feed("后面的话")
    assert "".join(sent) == before and "约炮" not in before


def test_cost_does_not_grow_with_the_message_count(moderator):
    # one pass of an automaton: a long message is checked at once, hits anywhere
    text = "社保卡怎么办理" * 280 + "傻逼"
    verdict = moderator.check(text, "input")
    assert verdict.masked and verdict.text.endswith("＊＊")
