"""Query understanding: the term table, homophone typos, expansion with business words."""

from __future__ import annotations

import pytest
import yaml

from rag.errors import TermsError
from rag.expansion import BusinessTerms, QueryExpander
from rag.normalise import Normaliser
from rag.query import DEFAULT_TERMS, QueryUnderstanding, terms_path
from rag.terms import load_terms, parse_terms
from si_agent.config.loader import load_businesses
from si_agent.knowledge import business_terms

from .conftest import KB_DIR, ROOT


@pytest.fixture(scope="module")
def understanding() -> QueryUnderstanding:
    catalog = load_businesses(ROOT / "businesses")
    return QueryUnderstanding(load_terms(DEFAULT_TERMS), business_terms(catalog))


@pytest.mark.parametrize("asked, read", [
    ("社宝卡丢了咋整", "社保卡丢了怎么办"),      # homophone + dialect
    ("失叶金咋领", "失业金怎么领"),
    ("医报怎么报销", "医保怎么报销"),
    ("俺的社保断了咋整", "我的社保断了怎么办"),
    ("交了6年失业保险能领几个月失业今", "交了6年失业保险能领几个月失业金"),
    ("异地就医被案怎么办理", "异地就医备案怎么办理"),
    ("退体了还要交医保吗", "退休了还要交医保吗"),  # not a homophone: the table
    ("新农合一年交多少", "城乡居民医保一年交多少"),  # an old name
    ("shebaoka丢了怎么办", "社保卡丢了怎么办"),     # pinyin typed as letters
    ("养老金 zige renzheng 一年要搞几次", "养老金 资格认证 一年要搞几次"),
])
def test_typos_and_dialect_are_put_right(understanding, asked, read):
    assert understanding.understand(asked).text == read


@pytest.mark.parametrize("text", [
    "事业单位退休人员的养老金怎么算",  # 事业 is a word, not a typo of 失业
    "他是业主",                        # 是业 would cut through 业主
    "社保断了几个月有什么影响",        # 有 reads "you", never the rare "wei": no 为什么
    "临时挂失和正式挂失有什么区别",
    "已保存的材料还要再交吗",
    "医保个人账户的钱能给爸妈用吗",
    "社保卡能在app上办吗",           # letters that spell no domain word stay
    "帮我把 I love you 翻译成法语",
    "退休时的工资怎么算",             # 时的 is no typo of 是的 (a consultation's answer)
    "住院时的费用能报吗",
    "年轻时的社保能查吗",
    "我们队的社保谁管",               # 队的 / 对的
    "我挣的多交得也多吗",             # a consultation's option, no domain word
    "需要补交材料吗",                 # 补交 材料 is no 补缴
    "娃哈哈的员工社保怎么交",         # 娃 alone is no 孩子
    "点算社保年限",
])
def test_correct_text_is_left_alone(understanding, text):
    assert understanding.understand(text).text == text


def test_pinyin_words_are_read_one_by_one(understanding):
    """A sentence typed in pinyin: the words that spell domain words are put right."""
    assert understanding.understand("yanglaojin zenme renzheng").text == "养老金 zenme 认证"


def test_a_long_run_of_letters_is_read_quickly(understanding):
    # Linear in the length: the controller allows 2,000 characters; this is 5x that.
    assert understanding.understand("a" * 10000 + "社保").text.endswith("社保")


def test_corrections_are_recorded_as_data(understanding):
    query = understanding.understand("社宝卡丢了咋整")
    assert [(c.original, c.replacement, c.source) for c in query.corrections] == [
        ("咋整", "怎么办", "table"), ("社宝卡丢了", "社保卡丢了", "pinyin")]


def test_the_qa_set_is_not_mangled(understanding, qa):
    """Every change the normaliser makes to the existing QA set puts a typo or a dialect
    word right; a false correction would show up here."""
    changed = {item["q"]: understanding.understand(item["q"]).text for item in qa["questions"]}
    changed = {q: t for q, t in changed.items() if t != q}
    assert changed == {
        "换了个城市上班，以前交的社保咋办": "换了个城市上班，以前交的社保怎么办",
        "交了6年失业保险能领几个月失业今": "交了6年失业保险能领几个月失业金",
        "申领失业保险金要带啥材料": "申领失业保险金要带什么材料",
        "社宝卡被偷了 怎么挂失": "社保卡被偷了 怎么挂失",
        "临时挂失和正式挂失有啥区别": "临时挂失和正式挂失有什么区别",
        "异地就医备案怎么弄": "异地就医备案怎么办",
        "养老金调整的钱啥时候补发": "养老金调整的钱什么时候补发",
        "居民医保断交了有等待期吗": "居民医保断缴了有等待期吗",
        "住院报销比例多少 起付线是啥": "住院报销比例多少 起付线是什么",
    }


def test_business_words_expand_the_search(understanding):
    query = understanding.understand("被公司辞退了能领什么补助吗")
    assert query.text == "被公司辞退了能领什么补助吗"  # what the gate and the answer read
    assert query.added == ("失业保险金申领",)         # "被辞退" is an option of the claim
    assert query.businesses == ("unemployment_benefit",)
    assert query.search_text == "被公司辞退了能领什么补助吗 失业保险金申领"


def test_a_phrase_two_businesses_share_names_neither():
    expander = QueryExpander([BusinessTerms("a", "甲业务", ("身份证号", "挂失")),
                              BusinessTerms("b", "乙业务", ("身份证号",))])
    assert expander.expand("身份证号填错了").businesses == ()
    assert expander.expand("怎么挂失").added == ("甲业务",)


def test_help_text_synonyms_map_to_their_main_word(understanding):
    assert "临时挂失" in understanding.understand("口头挂失有效期多久").added


def test_steps_can_be_switched_off():
    table = load_terms(DEFAULT_TERMS)
    plain = QueryUnderstanding(table, corrections=False, pinyin=False, expand=False)
    assert plain.understand("社宝卡丢了咋整").search_text == "社宝卡丢了咋整"
    assert QueryUnderstanding(table, pinyin=False).understand("社宝卡丢了咋整").text == "社宝卡丢了怎么办"


def test_a_knowledge_directory_without_a_table_uses_the_shipped_one(tmp_path):
    assert terms_path(tmp_path) == DEFAULT_TERMS
    assert terms_path(KB_DIR) == KB_DIR / "_terms.yaml"
    (tmp_path / "_terms.yaml").write_text("domain: [社保]\n", encoding="utf-8")
    assert terms_path(tmp_path) == tmp_path / "_terms.yaml"


def test_the_shipped_table_loads():
    table = load_terms(DEFAULT_TERMS)
    assert table.corrections["咋整"] == "怎么办"
    assert "社保" in table.domain and "系统提示词" in table.refuse
    # The file is plain YAML for staff: every value a word, nothing read as a boolean.
    raw = yaml.safe_load(DEFAULT_TERMS.read_text(encoding="utf-8"))
    assert set(raw) == {"corrections", "domain", "refuse"}


@pytest.mark.parametrize("text, line, message", [
    ("corrections:\n  社保卡: [社保]\n", 2, "occurs inside the right word '社保卡'"),
    ("corrections:\n  怎么办: [咋整]\n  怎么: [咋整]\n", 3, "listed under both"),
    ("corrections:\n  怎么办: 咋整\n", 2, "a list of words"),
    ("corrections:\n  怎么办: [怎么办]\n", 2, "equal to the word itself"),
    ("domain: [社保, '']\n", 1, "non-empty word"),
    ("refuze: [提示词]\n", 1, "unknown key 'refuze'; valid keys: corrections, domain, refuse"),
    ("corrections: [\n", None, "not valid YAML"),
])
def test_a_broken_table_is_located(text, line, message):
    with pytest.raises(TermsError, match=message) as err:
        parse_terms(text, file="_terms.yaml")
    if line is not None:
        assert str(err.value).startswith(f"_terms.yaml:{line}:")


def test_yes_and_no_stay_words():
    assert parse_terms("domain: [yes, on, 是]\n").domain == ("yes", "on", "是")


def test_without_pinyin_only_the_table_applies():
    normaliser = Normaliser(load_terms(DEFAULT_TERMS), pinyin=False)
    assert normaliser.normalise("失叶金咋领").text == "失叶金怎么领"


def test_a_broken_table_stops_the_start(tmp_path):
    from si_agent.config.settings import Settings
    from si_agent.errors import ConfigError
    from si_agent.knowledge import create_knowledge, typo_normaliser

    (tmp_path / "_terms.yaml").write_text("corrections:\n  社保卡: [社保]\n", encoding="utf-8")
    settings = Settings(data_dir=tmp_path / "data", kb_dir=tmp_path, embed_model="hashing")
    catalog = load_businesses(ROOT / "businesses")
    for build in (typo_normaliser, create_knowledge):
        with pytest.raises(ConfigError, match=r"_terms.yaml:2: .*occurs inside"):
            build(settings, catalog)
