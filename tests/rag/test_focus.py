"""The extractive answer answers the question asked: the lead by the question's focus,
never said twice, headings apart, one document's numbers, and no answer from a
document that does not name the scheme asked about."""

from __future__ import annotations

from rag import focus as F
from rag.answer import compose
from rag.relevance import naming_scheme, schemes_named
from rag.store import Hit

CARD = "社保卡补领指南"


def hit(doc, n, text, *, heading="", cosine=0.9, title=None, businesses=("card_loss",)) -> Hit:
    return Hit(chunk_id=f"{doc}#{n:03d}", doc_id=doc, title=title or CARD, heading=heading,
               text=text, businesses=tuple(businesses), score=1.0 / (n + 1), cosine=cosine)


# One document in four sections, as the knowledge documents are written.
REISSUE = [
    hit("reissue", 0, "社保卡丢失后需要先挂失，再申请补领新卡，补领后原卡作废。", cosine=0.92),
    hit("reissue", 1, "- 本人有效身份证件和近期免冠照片。\n- 代办的还需要提供代办人的身份证件。",
        heading="需要的材料", cosine=0.91),
    hit("reissue", 2, "补领社保卡一般收取工本费20元，不少地区已经免收。", heading="费用", cosine=0.90),
    hit("reissue", 3, "先挂失，再补办：- 即时制卡网点当场制卡、立等可取。\n"
        "- 线上申请的制卡后邮寄到家，一般需要15至30个工作日。",
        heading="补办要多久（办理渠道和时限）", cosine=0.89),
]


def lead(answer) -> str:
    return answer.text.split("\n", 1)[0]


def test_the_question_focus():
    names = lambda q: [f.name for f in F.focuses(q)]  # noqa: E731
    assert "money" in names("补办社保卡要多少钱")
    assert "time" in names("补办社保卡要多久")
    assert "place" in names("失业登记去哪里办")
    assert "materials" in names("办社保卡要带什么")
    assert "who" in names("哪些人可以参加居民医保")
    # "when does it take effect" asks for the start, not how long something lasts.
    assert "start" in names("异地就医备案什么时候生效")
    assert "time" not in names("异地就医备案什么时候生效")


def test_a_fee_question_is_answered_with_the_fee_not_the_materials():
    answer = compose("补办社保卡要多少钱", REISSUE)
    assert "20元" in lead(answer)
    assert "身份证件" not in lead(answer)


def test_a_time_question_is_answered_with_the_time():
    answer = compose("补办社保卡要多久", REISSUE)
    assert "15至30个工作日" in lead(answer)


def test_a_materials_question_is_answered_with_the_materials():
    answer = compose("补办社保卡要带什么材料", REISSUE)
    assert "身份证件" in lead(answer)
    assert "20元" not in lead(answer)


def test_when_it_takes_effect_is_not_answered_with_the_validity_period():
    hits = [hit("filing", 0, "异地就医备案的有效期一般为1年，到期后可以续期。", heading="备案有效期",
                title="异地就医备案", cosine=0.92),
            hit("filing", 1, "备案成功后即时生效，在备案地的定点医院就医可以直接结算。", heading="备案后",
                title="异地就医备案", cosine=0.90)]
    answer = compose("异地就医备案什么时候生效", hits)
    assert "即时生效" in lead(answer)
    assert "有效期" not in lead(answer)


def test_a_place_question_is_answered_with_the_place():
    hits = [hit("reg", 0, "失业登记是申领失业保险金的前提，登记后可以享受免费的职业介绍。",
                title="失业登记", cosine=0.92),
            hit("reg", 1, "可以到常住地街道的公共就业服务窗口办理，也可以通过人社App线上办理。",
                heading="去哪里登记", title="失业登记", cosine=0.90)]
    answer = compose("失业登记去哪里办", hits)
    assert "公共就业服务窗口" in lead(answer)


def test_the_lead_is_not_said_again_and_headings_stand_apart():
    answer = compose("补办社保卡要多久", REISSUE)
    said = "一般需要15至30个工作日"
    assert answer.text.count(said) == 1
    lines = answer.text.split("\n")
    # A heading is a line of its own, and a list written on its lead-in's line is one
    # bullet a line.
    assert "【补办要多久（办理渠道和时限）】" in lines
    assert "先挂失，再补办：" in lines
    assert "· 即时制卡网点当场制卡、立等可取。" in lines


def test_a_passage_the_lead_says_whole_is_not_shown_again():
    hits = [hit("card", 0, "社保卡丢失后应当尽快挂失，可以拨打12333电话挂失。")]
    answer = compose("社保卡丢了怎么挂失", hits)
    assert answer.text == "社保卡丢失后应当尽快挂失，可以拨打12333电话挂失。\n来源：《社保卡补领指南》"


def test_one_reply_gives_one_documents_numbers():
    hits = [hit("transfer", 0, "社保关系转移全流程一般不超过45个工作日。", heading="办理时限",
                title="社保转移指南", cosine=0.92),
            hit("timing", 0, "社保关系转移一般在15个工作日内办结。", heading="多久办完",
                title="办理时间速查", cosine=0.91)]
    answer = compose("社保转移要多久", hits)
    assert ("45个工作日" in answer.text) != ("15个工作日" in answer.text)
    assert len(answer.sources) == 1


def test_a_named_scheme_is_answered_only_by_a_document_naming_it():
    docs = {"calc": "基本养老金由基础养老金和个人账户养老金组成。",
            "private": "个人养老金实行个人账户制，参加人每年缴费上限为12000元。"}
    hits = [hit("calc", 0, "个人账户养老金等于个人账户储存额除以计发月数。", title="养老金计算"),
            hit("private", 0, "个人养老金实行个人账户制。", title="个人养老金")]
    assert [h.doc_id for h in naming_scheme("个人养老金怎么开户", hits, docs)] == ["private"]
    assert naming_scheme("长护险怎么报销", hits, docs) == []  # no document names it
    assert naming_scheme("养老金怎么算", hits, docs) == hits  # names no scheme
    assert schemes_named("長護險是什么") and schemes_named("长期护理保险是什么")


def test_how_long_one_has_paid_is_a_contribution_question():
    from rag.query import DEFAULT_TERMS
    from rag.relevance import is_relevant
    from rag.terms import load_terms

    domain = load_terms(DEFAULT_TERMS).domain
    close = [hit("calc", 0, "", cosine=0.9)]
    assert is_relevant("交15年能领多少", close, floor=0.87, domain=domain)
    assert is_relevant("缴了十年能退休吗", close, floor=0.87, domain=domain)
    assert not is_relevant("交通事故怎么处理", close, floor=0.87, domain=domain)


def test_items_of_a_list_keep_their_lines_in_the_lead():
    answer = compose("补办社保卡要带什么材料", REISSUE)
    lines = answer.text.split("\n")
    assert lines[0] == "· 本人有效身份证件和近期免冠照片。"
    assert lines[1] == "· 代办的还需要提供代办人的身份证件。"
    assert answer.text.count("代办人的身份证件") == 1


def test_how_long_one_must_pay_is_no_processing_time_question():
    names = [f.name for f in F.focuses("失业保险交满多久才能领失业金")]
    assert "time" not in names and "quantity" in names
