"""Free text and invisible characters: direction controls and control characters are
refused, other invisible format characters dropped, line breaks kept only where allowed."""

from __future__ import annotations

import pytest

from si_agent.validators import check, extract
from si_agent.validators import messages as M

ADDRESS = "浙江省杭州市西湖区文三路100号"


@pytest.mark.parametrize("char", [
    "\u202e", "\u202a", "\u202b", "\u202c", "\u202d",  # embeddings and overrides
    "\u2066", "\u2067", "\u2068", "\u2069",            # isolates
    "\u200e", "\u200f", "\u061c",                      # marks
])
def test_direction_controls_are_refused(char):
    result = check("text", f"浙江省杭州市{char}号001路三文区湖西")
    assert not result.ok and result.error == M.TEXT_BIDI
    assert "方向" in M.TEXT_BIDI


@pytest.mark.parametrize("char", [
    "\x00", "\x1b", "\x07", "\x08", "\x7f", "\x9b", "\x80",  # C0, DEL, C1 (CSI)
    "\ud800",                                              # a lone surrogate (JSON "\ud800")
    "\U000e0041",                                          # a tag character (hidden ASCII)
])
def test_control_characters_are_refused(char):
    result = check("text", f"{ADDRESS}{char}[31m")
    assert not result.ok and result.error == M.TEXT_CONTROL


@pytest.mark.parametrize("char", ["\u200b", "\u200d", "\u2060", "\ufeff", "\u00ad", "\u180e"])
def test_other_invisible_format_characters_are_dropped(char):
    assert check("text", f"{char}浙江省杭州市{char}西湖区文三路100号{char}").value == ADDRESS


def test_a_single_line_field_turns_line_breaks_and_tabs_into_spaces():
    for sep in ("\n", "\r\n", "\r", "\t", "\x0b", "\x0c", "\x85", "\u2028", "\u2029"):
        assert check("text", f"浙江省杭州市{sep}西湖区").value == "浙江省杭州市 西湖区", repr(sep)


def test_a_multiline_field_keeps_its_line_breaks():
    value = check("text", "第一行\r\n第二行\r第三行\u2028第四行\t完", multiline=True).value
    assert value == "第一行\n第二行\n第三行\n第四行 完"
    assert check("text", "第一行\n\x1b[2J", multiline=True).error == M.TEXT_CONTROL
    assert check("text", "第一行\n\u202e", multiline=True).error == M.TEXT_BIDI


def test_lengths_count_what_is_kept():
    assert check("text", "字" + "\u200b" * 300, max_length=5).value == "字"
    assert check("text", "\u200b\u200b").error == M.EMPTY
    assert check("text", "字\u200b字", min_length=3).error == M.TEXT_TOO_SHORT.format(n=3)


def test_a_pattern_is_matched_on_the_cleaned_text():
    assert check("text", "SI2026\u200b1130000042", pattern=r"^SI\d{14}$").value == "SI20261130000042"
    assert check("text", "SI2026\u202e1130000042", pattern=r"^SI\d{14}$").error == M.TEXT_BIDI


def test_extract_skips_matches_with_refused_characters_and_cleans_the_rest():
    assert extract("text", "编号A\x1b123 好", pattern=r"[A-Z]\S+") == []
    assert extract("text", "编号A\u202e123 好", pattern=r"[A-Z]\S+") == []
    (found,) = extract("text", "编号A\u200b123 好", pattern=r"[A-Z]\S+")
    assert (found.value, found.start, found.end, found.raw) == ("A123", 2, 7, "A\u200b123")


def test_ordinary_text_is_untouched():
    for text in (ADDRESS, "我是做 IT 的", "普通文字，标点！", "Ａ座３０１室", "笑脸😀"):
        assert check("text", text).ok
    assert check("text", "我是做 IT 的").value == "我是做 IT 的"


def test_a_pattern_that_backtracks_without_end_takes_seconds_not_a_worker():
    import time

    from si_agent.validators import text

    pattern = r"^(a|aa)+$"
    started = time.monotonic()
    result = text.check("a" * 40 + "!", pattern=pattern)
    text.extract("编号 " + "a" * 40 + "! 好的", pattern=pattern)
    assert not result.ok
    assert time.monotonic() - started < 15  # each match stops at PATTERN_SECONDS
    assert text.slow_pattern(pattern) is not None
    assert text.slow_pattern(r"^SI\d{14}$") is None
    assert text.check("SI20261130000042", pattern=r"^SI\d{14}$").value == "SI20261130000042"
