"""Names and free text."""

from __future__ import annotations

import pytest

from si_agent.validators import check, extract


class TestName:
    @pytest.mark.parametrize("raw,value", [
        ("张三", "张三"), ("欧阳娜娜", "欧阳娜娜"), ("张 三", "张三"),
        ("买买提·艾力", "买买提·艾力"), ("买买提•艾力", "买买提·艾力"), ("买买提.艾力", "买买提·艾力"),
        ("买买提・艾力", "买买提·艾力"), ("阿依古丽·买买提·吐尔逊", "阿依古丽·买买提·吐尔逊"),
        ("王𠇔", "王𠇔"),  # a name with a rare character outside the basic block
    ])
    def test_accepted(self, raw, value):
        assert check("name", raw).value == value

    def test_digits_latin_and_symbols(self):
        assert check("name", "张3").error == "姓名中有数字。"
        assert check("name", "Zhang San").error == "姓名中有英文字母。"
        assert check("name", "张三!").error == "姓名中有不是汉字的字符。"
        # A cue or a pronoun is not part of a name (the engine strips cues first).
        assert check("name", "我叫张三").error == "“我叫张三”不像是姓名。"

    def test_dot_in_the_wrong_place(self):
        assert check("name", "·张三").error == "姓名中的间隔号“·”位置不对。"
        assert check("name", "张三·").error == "姓名中的间隔号“·”位置不对。"

    def test_length(self):
        assert check("name", "张").error == "姓名至少应有2个汉字。"
        assert check("name", "张" * 21).error == "姓名不能超过20个汉字。"
        assert check("name", "张三丰", max_length=2).error == "姓名不能超过2个汉字。"
        assert check("name", "张", min_length=1).ok

    @pytest.mark.parametrize("raw", ["社保", "本人", "不知道"])
    def test_words_that_are_not_names(self, raw):
        assert check("name", raw).error == f"“{raw}”不像是姓名。"

    @pytest.mark.parametrize("text,name", [
        ("我叫张三", "张三"), ("我叫张三，身份证号是", "张三"), ("我叫张三身份证号是", "张三"),
        ("你好，我是李四。", "李四"), ("姓名：王五", "王五"), ("姓名:王五，电话", "王五"),
        ("姓名是赵六", "赵六"), ("名字叫孙七啊", "孙七"), ("本人周八，想查社保", "周八"),
        ("我叫欧阳娜娜想查一下", "欧阳娜娜"), ("我叫李想", "李想"), ("我叫 吴九", "吴九"),
        ("我叫买买提·艾力，", "买买提·艾力"),
    ])
    def test_extract_after_a_cue(self, text, name):
        (found,) = extract("name", text)
        assert found.value == name
        assert text[found.start:found.end] == found.raw

    @pytest.mark.parametrize("text", [
        "我是来办社保的", "我是说真的", "我是退休职工", "我是杭州人", "本人想查社保",
        "我是本人", "张三", "我叫张三丰你好呀呀呀",
    ])
    def test_extract_refuses_non_names(self, text):
        assert extract("name", text) == []


class TestText:
    def test_defaults(self):
        assert check("text", "  单位名称  ").value == "单位名称"
        assert check("text", "字" * 200).ok
        assert check("text", "字" * 201).error == "内容超过了200个字。"

    def test_lengths(self):
        assert check("text", "ab", min_length=3).error == "内容不足3个字。"
        assert check("text", "abcd", max_length=3).error == "内容超过了3个字。"

    def test_pattern_must_match_the_whole_answer(self):
        assert check("text", "A123", pattern=r"[A-Z]\d{3}").value == "A123"
        assert check("text", "A1234", pattern=r"[A-Z]\d{3}").error == "内容格式不符合要求。"
        assert check("text", "Ａ１２３", pattern=r"[A-Z]\d{3}").value == "A123"

    def test_extract_needs_a_pattern(self):
        assert extract("text", "编号A123") == []
        assert extract("text", "编号A123", pattern=None) == []

    @pytest.mark.parametrize("pattern", [r"[A-Z]\d{3}", r"^[A-Z]\d{3}$", r"\A[A-Z]\d{3}\Z"])
    def test_extract_drops_anchors(self, pattern):
        found = extract("text", "编号A123和B456", pattern=pattern)
        assert [(f.value, f.start, f.end) for f in found] == [("A123", 2, 6), ("B456", 7, 11)]

    def test_extract_keeps_an_escaped_dollar(self):
        assert [f.value for f in extract("text", "价格9$", pattern=r"\d\$")] == ["9$"]


@pytest.mark.parametrize("name", ["宋国庆", "王春节", "张元旦"])
def test_a_holiday_after_a_surname_is_a_given_name(name):
    assert check("name", name).ok


@pytest.mark.parametrize("said", ["国庆", "国庆节", "春节前后", "元旦那天"])
def test_a_holiday_said_alone_is_no_name(said):
    assert not check("name", said).ok


@pytest.mark.parametrize("said,name", [("李四吧", "李四"), ("张伟啊", "张伟")])
def test_a_particle_after_the_name_is_left_out(said, name):
    assert check("name", said).value == name


@pytest.mark.parametrize("said", ["是李四", "原来", "同上", "叫你们领导来", "联系我", "等等", "测试"])
def test_what_the_outsider_had_stored_as_a_name_is_refused(said):
    assert not check("name", said).ok


class TestNumeralNames:
    """A run of Chinese numerals is a number read out, not a name (issue 25 follow-up)."""

    @pytest.mark.parametrize("raw", [
        "三三零一零二", "一二三", "一二", "三三", "零零七", "壹贰叁", "幺三八", "二十",
        "一百二十三", "万一二三", "陆三零一零二",
    ])
    def test_refused(self, raw):
        assert check("name", raw).error == f"“{raw}”是一串数字，不像是姓名。"

    @pytest.mark.parametrize("raw", [
        "王一", "张三", "李四", "赵六", "孙七", "王一二", "张三三", "伍六一", "陆九", "万一",
        "陆三九", "万千", "钱七七", "吴九", "周八",
    ])
    def test_names_with_numerals_stay_names(self, raw):
        assert check("name", raw).value == raw

    def test_no_name_from_a_cue_before_numerals(self):
        assert extract("name", "我叫三三零一零二") == []
        (found,) = extract("name", "我叫王一")
        assert found.value == "王一"
