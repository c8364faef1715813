"""Cities: the shipped list, short names, province prefixes."""

from __future__ import annotations

import collections

import pytest

from si_agent.validators import Found, check, extract
from si_agent.validators.city import short_name, tables

NOT_FOUND = "没有找到这个城市，请输入地级市名称。"


def test_the_list_covers_every_prefecture_level_division():
    t = tables()
    assert len(t.provinces) == 337
    kinds = collections.Counter(
        next(k for k in ("自治州", "地区", "盟", "市") if full.endswith(k)) for full in t.provinces
    )
    assert kinds == {"市": 297, "自治州": 30, "地区": 7, "盟": 3}
    assert len(set(t.provinces.values())) == 31


def test_short_names_are_unambiguous():
    t = tables()
    assert t.ambiguous == frozenset()
    shorts = collections.Counter(short_name(full) for full in t.provinces)
    assert [s for s, n in shorts.items() if n > 1] == []
    for full in t.provinces:
        assert t.keys[full] == full


@pytest.mark.parametrize("city", ["北京市", "上海市", "天津市", "重庆市"])
def test_municipalities(city):
    assert check("city", city).value == city
    assert check("city", city[:-1]).value == city


@pytest.mark.parametrize("raw,full", [
    ("石家庄", "石家庄市"), ("大同", "大同市"), ("呼和浩特", "呼和浩特市"), ("锡林郭勒盟", "锡林郭勒盟"),
    ("葫芦岛", "葫芦岛市"), ("延边", "延边朝鲜族自治州"), ("大兴安岭", "大兴安岭地区"),
    ("苏州", "苏州市"), ("杭州", "杭州市"), ("亳州", "亳州市"), ("厦门", "厦门市"),
    ("景德镇", "景德镇市"), ("青岛", "青岛市"), ("驻马店", "驻马店市"), ("襄阳", "襄阳市"),
    ("恩施", "恩施土家族苗族自治州"), ("湘西", "湘西土家族苗族自治州"), ("深圳", "深圳市"),
    ("防城港", "防城港市"), ("三沙", "三沙市"), ("儋州", "儋州市"), ("凉山", "凉山彝族自治州"),
    ("毕节", "毕节市"), ("铜仁", "铜仁市"), ("普洱", "普洱市"), ("西双版纳", "西双版纳傣族自治州"),
    ("日喀则", "日喀则市"), ("那曲", "那曲市"), ("林芝", "林芝市"), ("山南", "山南市"), ("昌都", "昌都市"),
    ("延安", "延安市"), ("陇南", "陇南市"), ("海东", "海东市"), ("海西州", "海西蒙古族藏族自治州"),
    ("中卫", "中卫市"), ("吐鲁番", "吐鲁番市"), ("哈密", "哈密市"), ("伊犁", "伊犁哈萨克自治州"),
    ("博州", "博尔塔拉蒙古自治州"), ("克州", "克孜勒苏柯尔克孜自治州"), ("阿勒泰", "阿勒泰地区"),
])
def test_cities_across_provinces(raw, full):
    assert check("city", raw).value == full
    assert check("city", full).value == full


@pytest.mark.parametrize("raw,full", [
    ("浙江杭州", "杭州市"), ("浙江省杭州市", "杭州市"), ("浙江省 杭州", "杭州市"),
    ("吉林长春", "长春市"), ("吉林省吉林市", "吉林市"), ("广西南宁", "南宁市"),
    ("内蒙古自治区呼和浩特市", "呼和浩特市"), ("湖北恩施州", "恩施土家族苗族自治州"),
    ("新疆喀什地区", "喀什地区"), ("青海海南州", "海南藏族自治州"),
])
def test_province_prefixed(raw, full):
    assert check("city", raw).value == full


@pytest.mark.parametrize("raw,province", [("浙江", "浙江省"), ("浙江省", "浙江省"), ("海南", "海南省"),
                                          ("新疆", "新疆维吾尔自治区")])
def test_a_province_is_not_a_city(raw, province):
    assert check("city", raw).error == f"“{province}”是省份，不是地级市。"


@pytest.mark.parametrize("raw", ["朝阳区", "海淀", "浦东新区", "义乌", "仙桃", "杭州西湖区", "江苏杭州",
                                 "襄樊", "Hangzhou"])
def test_not_a_prefecture_level_city(raw):
    assert check("city", raw).error == NOT_FOUND


def test_extract():
    found = extract("city", "从杭州转到苏州")
    assert [(f.value, f.start, f.raw) for f in found] == [("杭州市", 1, "杭州"), ("苏州市", 5, "苏州")]


def test_extract_longest_first():
    found = extract("city", "我从浙江省杭州市调到吉林长春，户口在吉林")
    assert [(f.value, f.raw) for f in found] == [
        ("杭州市", "浙江省杭州市"), ("长春市", "吉林长春"), ("吉林市", "吉林"),
    ]


def test_extract_skips_provinces_and_districts():
    assert extract("city", "我在浙江工作，住北京朝阳区") == [Found("北京市", 8, 10, "北京")]
    assert extract("city", "海南和广东") == []
