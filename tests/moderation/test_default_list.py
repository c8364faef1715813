"""The packaged default list: no false positive on any corpus of the project.

Every citizen message of every transcript folder and question corpus (input check)
and every text the assistant says from files (output check): no hit at all. The
scoring is ``false_positives`` of scripts/bench_moderation.py (which prints the table).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from si_agent.moderation import WordListModerator
from si_agent.moderation.words import list_path, load_word_list

ROOT = Path(__file__).resolve().parents[2]


def _bench():
    spec = importlib.util.spec_from_file_location("bench_moderation",
                                                  ROOT / "scripts" / "bench_moderation.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_default_list_has_no_false_positive_on_the_corpora():
    words, errors = load_word_list(list_path(ROOT / "businesses"))
    assert errors == [] and words is not None
    rows = _bench().false_positives(WordListModerator(words))
    assert sum(n for _, _, n, _ in rows) > 4000  # the corpora were found
    assert {name: hits for name, _, _, hits in rows if hits} == {}


def test_default_list_catches_what_it_lists():
    words, _ = load_word_list(list_path(ROOT / "businesses"))
    moderator = WordListModerator(words)
    assert moderator.check("你们这个破系统，王八蛋，怎么查不到", "input").masked
    assert moderator.check("加我约炮", "input").refused
    assert moderator.check("有人说可以办假证领养老金", "input").flagged
    care = moderator.check("我真的不想活了", "input")
    assert care.refused and "12356" in (care.reply or "")


@pytest.mark.parametrize("text", [
    "sb卡丢了怎么办",  # sb: 社保
    "我孩子是智障，能办残疾人社保补贴吗",
    "帮我查一下他妈的养老金",  # his mother's
    "电脑 残疾人证怎么办",
    "TMD患者医保能报销吗",
])
def test_default_list_leaves_ordinary_words_alone(text):
    words, _ = load_word_list(list_path(ROOT / "businesses"))
    assert WordListModerator(words).check(text, "input").clean
