"""Years and dates."""

from __future__ import annotations

from datetime import date

import pytest
from validators_support import TODAY, make_id

from si_agent.validators import check, extract


class TestYear:
    @pytest.mark.parametrize("raw,year", [
        ("2019", 2019), ("2019年", 2019), ("2019年度", 2019), ("1990", 1990),
        ("19年", 2019), ("98年", 1998), ("25年", 2025), ("26年", 1926),
        ("今年", 2025), ("去年", 2024), ("前年", 2023),
        ("二〇一九年", 2019), ("一九九八", 1998), ("２０１９", 2019),
    ])
    def test_accepted(self, raw, year):
        assert check("year", raw, today=TODAY).value == year

    def test_two_digits_need_nian(self):
        assert check("year", "19", today=TODAY).error == "无法识别这个年份。"

    @pytest.mark.parametrize("raw", ["明年", "2019-2020", "abc", "201９年3月"])
    def test_unreadable(self, raw):
        assert check("year", raw, today=TODAY).error == "无法识别这个年份。"

    @pytest.mark.parametrize("raw", ["1899", "2101", "0000"])
    def test_outside_1900_2100(self, raw):
        assert check("year", raw, today=TODAY).error == "年份应在1900到2100之间。"

    def test_not_future(self):
        assert check("year", "2026", not_future=True, today=TODAY).error == "年份不能晚于今年。"
        assert check("year", "2025", not_future=True, today=TODAY).ok
        assert check("year", "2026", today=TODAY).ok

    def test_min_and_max(self):
        opts = {"min": 1990.0, "max": 2020.0, "today": TODAY}
        assert check("year", "1989", **opts).error == "年份应在1990到2020之间。"
        assert check("year", "2021", **opts).error == "年份应在1990到2020之间。"
        assert check("year", "1990", **opts).ok and check("year", "2020", **opts).ok
        assert check("year", "1989", min=1990, today=TODAY).error == "年份不能早于1990年。"
        assert check("year", "2021", max=2020, today=TODAY).error == "年份不能晚于2020年。"

    def test_extract(self):
        text = "我从2010年开始交，前年断了，98年参加工作"
        assert [(f.value, f.raw) for f in extract("year", text, today=TODAY)] == [
            (2010, "2010年"), (2023, "前年"), (1998, "98年"),
        ]

    def test_extract_does_not_take_durations_or_amounts(self):
        text = "交了25年，缴费15年，每月2000元，共2019人"
        assert extract("year", text, today=TODAY) == []

    def test_extract_does_not_take_digits_of_an_id_number(self):
        assert extract("year", f"身份证{make_id(birth='19900101')}", today=TODAY) == []

    def test_extract_applies_options(self):
        text = "2019年和2030年"
        assert [f.value for f in extract("year", text, today=TODAY)] == [2019, 2030]
        assert [f.value for f in extract("year", text, not_future=True, today=TODAY)] == [2019]


class TestDate:
    @pytest.mark.parametrize("raw", [
        "2024-03-05", "2024-3-5", "2024/3/5", "2024.3.5", "20240305", "2024年3月5日",
        "2024年03月05号", "2024年3月5", "二〇二四年三月五日", "24年3月5日", "２０２４－０３－０５",
    ])
    def test_formats(self, raw):
        assert check("date", raw, today=TODAY).value == "2024-03-05"

    @pytest.mark.parametrize("raw,iso", [
        ("今天", "2025-06-01"), ("昨天", "2025-05-31"), ("前天", "2025-05-30"),
        ("二〇二三年十二月三十一日", "2023-12-31"), ("2023年十月二十日", "2023-10-20"),
    ])
    def test_relative_and_chinese(self, raw, iso):
        assert check("date", raw, today=TODAY).value == iso

    def test_invalid_calendar_dates(self):
        assert check("date", "2023-02-29", today=TODAY).error == "2023年2月没有29日。"
        assert check("date", "2024-04-31", today=TODAY).error == "2024年4月没有31日。"
        assert check("date", "2024-02-29", today=TODAY).ok
        assert check("date", "2024-13-01", today=TODAY).error == "日期中的月份应在1到12之间。"
        assert check("date", "2024-00-10", today=TODAY).error == "日期中的月份应在1到12之间。"

    def test_incomplete_dates(self):
        assert check("date", "2024年3月", today=TODAY).error == "日期缺少具体是哪一天。"
        assert check("date", "2024-03", today=TODAY).error == "日期缺少具体是哪一天。"
        # Without a year: the next such day, or with not_future the latest past one.
        assert check("date", "3月5日", today=TODAY).value == "2026-03-05"
        assert check("date", "3月5日", today=TODAY, not_future=True).value == "2025-03-05"
        assert check("date", "7月1号", today=TODAY).value == "2025-07-01"
        assert check("date", "去年6月30号", today=TODAY).value == "2024-06-30"
        assert check("date", "上个月15号", today=TODAY).value == "2025-05-15"
        assert check("date", "下个月1号", today=TODAY).value == "2025-07-01"

    # 明天 and 下周一 are read now: see test_relative_dates.py.
    @pytest.mark.parametrize("raw", ["改天", "不记得了", "2024-3/5", "hello"])
    def test_unreadable(self, raw):
        assert check("date", raw, today=TODAY).error == "无法识别这个日期。"

    def test_year_range(self):
        assert check("date", "1899-12-31", today=TODAY).error == "日期中的年份应在1900到2100之间。"

    def test_not_future(self):
        opts = {"not_future": True, "today": TODAY}
        assert check("date", "2025-06-02", **opts).error == "日期不能晚于今天。"
        assert check("date", "2025-06-01", **opts).ok
        assert check("date", "今天", **opts).ok
        assert check("date", "2025-06-02", today=TODAY).ok

    def test_today_defaults_to_the_real_date(self):
        assert check("date", "今天").value == date.today().isoformat()

    def test_extract(self):
        text = "我2019年3月5日入职，2024-01-02离职，昨天才知道"
        assert [(f.value, f.raw) for f in extract("date", text, today=TODAY)] == [
            ("2019-03-05", "2019年3月5日"), ("2024-01-02", "2024-01-02"), ("2025-05-31", "昨天"),
        ]

    def test_extract_before_a_full_stop(self):
        assert [f.value for f in extract("date", "日期是2024.3.5.", today=TODAY)] == ["2024-03-05"]

    def test_extract_skips_invalid_and_id_dates(self):
        assert extract("date", "2023-02-30和2023年13月1日", today=TODAY) == []
        assert extract("date", f"身份证{make_id(birth='19900101')}", today=TODAY) == []
