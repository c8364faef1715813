"""Prefecture-level cities (地级行政区) and the four municipalities.

The list ships as ``si_agent/data/cities.txt`` ("full name<TAB>province" per
line) and is read once, on first use. Accepted forms of a city:

- the full name ("杭州市", "延边朝鲜族自治州", "大兴安岭地区", "兴安盟");
- the short name without 市/地区/盟, or for an autonomous prefecture without the
  ethnic groups and 自治州 ("杭州", "延边", "恩施"), also with 州 ("恩施州");
- either one after the province, full or short ("浙江杭州", "浙江省杭州市").

A province name alone is not a city, and neither is a district of Beijing or
Shanghai. A short name that is also the name of another province is not
accepted ("海南" is the province, not 海南藏族自治州 of Qinghai; say "海南州").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

from . import messages
from .base import Found, Result, invalid, longest_first, valid

_ETHNIC_GROUPS = (
    "朝鲜族", "土家族", "苗族", "藏族", "羌族", "彝族", "布依族", "侗族", "哈尼族",
    "壮族", "傣族", "白族", "景颇族", "傈僳族", "回族", "蒙古族", "维吾尔",
    "蒙古", "哈萨克", "柯尔克孜",
)
_SUFFIXES = ("自治州", "自治区", "地区", "省", "市", "盟")
_EXTRA_ALIASES = {
    "博州": "博尔塔拉蒙古自治州",
    "巴州": "巴音郭楞蒙古自治州",
    "克州": "克孜勒苏柯尔克孜自治州",
}
# A bare short name right before one of these names a district or a street
# ("朝阳区", "中山路"), not the city.
_NOT_A_CITY_AFTER = re.compile(r"[区县旗镇乡村路街]")
_WHITESPACE = re.compile(r"\s+")


def short_name(full: str) -> str:
    """A division's name without its type and ethnic groups: "恩施土家族苗族自治州" -> "恩施"."""
    base = full
    for suffix in _SUFFIXES:
        if full.endswith(suffix) and len(full) - len(suffix) >= 2:
            base = full[: -len(suffix)]
            break
    stripped = True
    while stripped:
        stripped = False
        for group in _ETHNIC_GROUPS:
            if base.endswith(group) and len(base) - len(group) >= 2:
                base = base[: -len(group)]
                stripped = True
    return base


@dataclass(frozen=True)
class CityTables:
    """The city list and every accepted way of writing each city."""

    provinces: dict[str, str]  # city full name -> province full name
    keys: dict[str, str]  # accepted form -> city full name
    short_keys: frozenset[str]  # forms that are a bare short name
    province_names: dict[str, str]  # province full or short name -> full name
    ambiguous: frozenset[str]  # forms claimed by two cities, hence dropped
    longest: int


def _city_forms(full: str) -> list[str]:
    short = short_name(full)
    forms = [full, short]
    if full.endswith("自治州"):
        forms.append(short + "州")
    return forms


@lru_cache(maxsize=1)
def tables() -> CityTables:
    """The city tables, built from ``cities.txt`` on first call."""
    text = (resources.files("si_agent") / "data" / "cities.txt").read_text("utf-8")
    provinces: dict[str, str] = {}
    for line in text.splitlines():
        if line.strip() and not line.startswith("#"):
            full, province = line.split("\t")
            provinces[full.strip()] = province.strip()

    municipalities = {c for c, p in provinces.items() if c == p}
    province_names: dict[str, str] = {}
    for province in set(provinces.values()) - municipalities:
        province_names[province] = province
        province_names[short_name(province)] = province

    keys: dict[str, str] = {}
    claims: dict[str, set[str]] = {}

    def claim(form: str, full: str) -> None:
        claims.setdefault(form, set()).add(full)
        keys[form] = full

    short_keys = set()
    for full, province in provinces.items():
        forms = _city_forms(full)
        for form in forms:
            other = province_names.get(form)
            if other is not None and other != province:
                continue
            claim(form, full)
            if form != full:
                short_keys.add(form)
        if full not in municipalities:
            for prefix in (province, short_name(province)):
                for form in forms:
                    claim(prefix + form, full)
    for alias, full in _EXTRA_ALIASES.items():
        claim(alias, full)
        short_keys.add(alias)

    ambiguous = frozenset(form for form, owners in claims.items() if len(owners) > 1)
    for form in ambiguous:
        del keys[form]
    return CityTables(
        provinces=provinces,
        keys=keys,
        short_keys=frozenset(short_keys - ambiguous),
        province_names=province_names,
        ambiguous=ambiguous,
        longest=max(map(len, keys)),
    )


def check(raw: str, **_: object) -> Result:
    """A city; the value is its full name ("杭州" -> "杭州市")."""
    t = tables()
    text = _WHITESPACE.sub("", raw)
    full = t.keys.get(text)
    if full is not None:
        return valid(full)
    province = t.province_names.get(text)
    if province is not None:
        return invalid(messages.CITY_IS_PROVINCE.format(province=province))
    return invalid(messages.CITY_NOT_FOUND)


def extract(text: str, **_: object) -> list[Found]:
    """Cities named in a sentence, longest first, not overlapping."""
    t = tables()
    candidates = []
    for start in range(len(text) - 1):
        for end in range(min(len(text), start + t.longest), start + 1, -1):
            form = text[start:end]
            full = t.keys.get(form)
            if full is None:
                continue
            if form in t.short_keys and _NOT_A_CITY_AFTER.match(text, end):
                continue
            candidates.append(Found(full, start, end, form))
            break
    return longest_first(candidates)
