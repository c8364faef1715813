"""Relative and colloquial dates ("上个月底", "下周一", "去年年底"), read through jionlp."""

from __future__ import annotations

import subprocess
import sys
from datetime import date
from pathlib import Path

import pytest

from si_agent.errors import DefinitionError
from si_agent.validators import check, extract

TODAY = date(2026, 12, 1)  # a Tuesday


def read(raw, **options):
    options.setdefault("today", TODAY)
    return check("date", raw, **options)


def found(text, **options):
    return [(f.value, f.start, f.end, f.raw) for f in extract("date", text, today=TODAY, **options)]


class TestPoints:
    @pytest.mark.parametrize("raw,iso", [
        ("明天", "2026-12-02"), ("后天", "2026-12-03"), ("大前天", "2026-11-28"),
        ("大后天", "2026-12-04"), ("三天前", "2026-11-28"), ("十天前", "2026-11-21"),
        ("下周一", "2026-12-07"), ("上周三", "2026-11-25"), ("这周五", "2026-12-04"),
        ("本周一", "2026-11-30"), ("上上周五", "2026-11-20"), ("下下周三", "2026-12-16"),
        ("上星期五", "2026-11-27"), ("上礼拜五", "2026-11-27"),
        ("去年国庆", "2025-10-01"), ("清明节", "2026-04-05"), ("去年春节", "2025-01-29"),
        ("去年中秋节", "2025-10-06"), ("端午节", "2026-06-19"), ("五一", "2026-05-01"),
        ("下个月15号", "2027-01-15"),
    ])
    def test_one_day(self, raw, iso):
        assert read(raw).value == iso

    @pytest.mark.parametrize("raw,iso", [
        ("月底", "2026-12-31"), ("本月底", "2026-12-31"), ("月末", "2026-12-31"),
        ("上月底", "2026-11-30"), ("上个月底", "2026-11-30"), ("上个月月底", "2026-11-30"),
        ("上月末", "2026-11-30"), ("下个月底", "2027-01-31"), ("去年11月底", "2025-11-30"),
        ("去年2月底", "2025-02-28"),
    ])
    def test_the_end_of_a_month_is_its_last_day(self, raw, iso):
        for date_span in ("ask", "start", "end"):
            assert read(raw, date_span=date_span).value == iso

    def test_absolute_forms_stay_on_the_regex_path(self):
        sys_modules = subprocess.run(
            [sys.executable, "-c",
             "import sys; from datetime import date; from si_agent.validators import check;"
             "assert check('date', '2024年3月5日', today=date(2026, 12, 1)).value == '2024-03-05';"
             "assert check('date', '昨天', today=date(2026, 12, 1)).value == '2026-11-30';"
             "print('jionlp' in sys.modules)"],
            capture_output=True, text=True, check=True,
            env={"PYTHONPATH": str(Path(__file__).parents[2])},
        ).stdout.strip()
        assert sys_modules == "False"


    def test_without_jionlp_relative_dates_are_not_read(self):
        out = subprocess.run(
            [sys.executable, "-c",
             "import sys; sys.modules['jionlp'] = None\n"
             "from datetime import date; from si_agent.validators import check\n"
             "today = date(2026, 12, 1)\n"
             "print(check('date', '下周一', today=today).error,"
             " check('date', '2024年3月5日', today=today).value)"],
            capture_output=True, text=True, check=True,
            env={"PYTHONPATH": str(Path(__file__).parents[2])},
        )
        assert out.stdout.split() == ["无法识别这个日期。", "2024-03-05"]
        assert "pip install 'si_agent[dates]'" in out.stderr


class TestSpans:
    @pytest.mark.parametrize("raw,first,last", [
        ("月初", "2026-12-01", "2026-12-05"),
        ("上个月初", "2026-11-01", "2026-11-05"),
        ("下个月初", "2027-01-01", "2027-01-05"),
        ("上旬", "2026-12-01", "2026-12-10"),
        ("中旬", "2026-12-11", "2026-12-20"),
        ("下旬", "2026-12-21", "2026-12-31"),
        ("11月上旬", "2026-11-01", "2026-11-10"),
        ("年初", "2026-01-01", "2026-02-28"),
        ("去年年初", "2025-01-01", "2025-02-28"),
        ("年底", "2026-11-01", "2026-12-31"),
        ("去年年底", "2025-11-01", "2025-12-31"),
        ("去年底", "2025-11-01", "2025-12-31"),
        ("春节后", "2026-02-17", "2026-12-01"),
        ("前两天", "2026-11-24", "2026-11-29"),
    ])
    def test_start_and_end(self, raw, first, last):
        assert read(raw, date_span="start").value == first
        assert read(raw, date_span="end").value == last

    def test_ask_quotes_the_span(self):
        assert read("去年年底").error == (
            "“去年年底”是指2025年11月1日至12月31日之间，请告诉我具体是哪一天，"
            "例如“2025年12月31日”。")
        assert read("去年年底", date_span="ask").error == read("去年年底").error
        assert read("下个月初").error == (
            "“下个月初”是指2027年1月1日至1月5日之间，请告诉我具体是哪一天，例如“2027年1月5日”。")

    @pytest.mark.parametrize("raw,day", [
        ("三个月前", "2026-09-01"), ("两周前", "2026-11-17"), ("半年前", "2026-06-01"),
        ("10天前", "2026-11-21"), ("一年前", "2025-12-01"), ("两个月之前", "2026-10-01"),
    ])
    def test_so_long_ago_is_that_day(self, raw, day):
        assert read(raw).value == day

    def test_so_long_ago_keeps_to_the_end_of_a_shorter_month(self):
        assert read("三个月前", today=date(2026, 5, 31)).value == "2026-02-28"
        assert read("一年前", today=date(2028, 2, 29)).value == "2027-02-28"

    def test_an_unknown_date_span_fails_loudly(self):
        with pytest.raises(DefinitionError, match="end, start, ask"):
            read("去年年底", date_span="last")


class TestNotFuture:
    def test_a_future_relative_day(self):
        assert read("下周一", not_future=True).error == "日期不能晚于今天。"
        assert read("明天", not_future=True).error == "日期不能晚于今天。"
        assert read("上周三", not_future=True).value == "2026-11-25"

    def test_a_future_span(self):
        for date_span in ("ask", "start", "end"):
            assert read("下个月初", not_future=True, date_span=date_span).error == (
                "日期不能晚于今天。")

    def test_a_span_around_today_ends_today(self):
        assert read("年底", not_future=True, date_span="end").value == "2026-12-01"
        assert read("年底", not_future=True, date_span="start").value == "2026-11-01"
        assert read("年底", not_future=True).error == (
            "“年底”是指2026年11月1日至12月1日之间，请告诉我具体是哪一天，例如“2026年12月1日”。")
        # 月初 is 1-5 December; on 1 December only today is left.
        assert read("月初", not_future=True).value == "2026-12-01"


class TestInSentences:
    def test_answers_that_are_sentences(self):
        assert read("上个月底离的职").value == "2026-11-30"
        assert read("下周一开始").value == "2026-12-07"
        assert read("明天就开始").value == "2026-12-02"
        assert read("我是去年年底走的", date_span="end").value == "2025-12-31"
        assert read("三个月前办的离职").value == "2026-09-01"

    @pytest.mark.parametrize("text,expected", [
        ("上个月底离职的", [("2026-11-30", 0, 4, "上个月底")]),
        ("三个月前办的离职", [("2026-09-01", 0, 4, "三个月前")]),
        ("下周一开始", [("2026-12-07", 0, 3, "下周一")]),
        ("从下周一开始", [("2026-12-07", 1, 4, "下周一")]),
        ("明天就开始", [("2026-12-02", 0, 2, "明天")]),
        ("我是去年年底走的", [(None, 2, 6, "去年年底")]),
        ("月底离职的", [("2026-12-31", 0, 2, "月底")]),
        ("上上周五办的", [("2026-11-20", 0, 4, "上上周五")]),
        ("春节后就没上班了", [(None, 0, 3, "春节后")]),
        ("我上个月15号离职，下周一去办", [("2026-11-15", 1, 7, "上个月15号"),
                                          ("2026-12-07", 10, 13, "下周一")]),
    ])
    def test_extract_finds_them_with_their_spans(self, text, expected):
        assert found(text) == expected

    def test_extract_reads_spans_by_date_span(self):
        assert found("我是去年年底走的", date_span="end") == [("2025-12-31", 2, 6, "去年年底")]
        assert found("我是去年年底走的", date_span="start") == [("2025-11-01", 2, 6, "去年年底")]
        assert found("下个月初办", date_span="start") == [("2027-01-01", 0, 4, "下个月初")]

    def test_extract_applies_not_future(self):
        assert found("下周一开始，上周三办的", not_future=True) == [
            ("2026-11-25", 6, 9, "上周三")]
        assert found("下个月初办", not_future=True) == []

    def test_extract_keeps_the_regex_readings(self):
        text = "我2019年3月5日入职，2024-01-02离职，昨天才知道"
        assert found(text) == [("2019-03-05", 1, 10, "2019年3月5日"),
                               ("2024-01-02", 13, 23, "2024-01-02"),
                               ("2026-11-30", 26, 28, "昨天")]

    def test_extracted_raw_checks_to_the_same_value(self):
        text = "上个月底离职，下周一开始找工作，去年年底体检，明天去社保局"
        for date_span in ("ask", "start", "end"):
            for f in extract("date", text, today=TODAY, date_span=date_span):
                assert text[f.start:f.end] == f.raw
                assert read(f.raw, date_span=date_span).value == f.value


class TestNotDates:
    @pytest.mark.parametrize("text", [
        "缴费15年", "干了三个月", "60岁", "我60岁了，缴费15年，干了三个月", "每月2000元，共2019人",
        "住15号楼", "我今年60岁，从2010年开始交，交了25年", "早上办的", "我叫王春",
    ])
    def test_extract_finds_nothing(self, text):
        assert found(text) == []

    @pytest.mark.parametrize("raw", ["缴费15年", "干了三个月", "60岁", "15号", "三个月"])
    def test_check_refuses(self, raw):
        assert read(raw).error == "无法识别这个日期。"

    @pytest.mark.parametrize("raw", ["去年12月", "今年3月份"])
    def test_a_month_has_no_day(self, raw):
        assert read(raw).error == "日期缺少具体是哪一天。"

    def test_two_different_dates_in_one_answer(self):
        assert read("上个月底或者下周一").error == "无法识别这个日期。"
