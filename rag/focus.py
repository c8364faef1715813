"""What a question asks for (its focus), and what a sentence or a section that gives it has.

A citizen asking "补办社保卡要多少钱" wants the fee, not the list of materials that
sits in the same passage; "什么时候生效" wants the day it starts, not how long it is
valid. Each ``Focus`` says how a question asks for one thing (``asks``), what a
sentence that answers it carries (``gives``: a number with the right unit, a
place word, a condition word…), which section headings are about it
(``heading``: the documents are written in sections such as 【费用】, 【需要的材料】,
【办理时限】), and, for some, what looks like an answer but is not (``avoid``: a
validity period for a question about when something takes effect).

``sentences.SentencePicker`` adds each focus's bonus to the sentences that give
it, prefers sentences under a heading about it, and holds back sentences under a
heading about another focus that the question does not ask for.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_NUM = r"(?:\d+(?:\.\d+)?|[一二三四五六七八九十两半百千万]+)"


@dataclass(frozen=True)
class Focus:
    name: str
    asks: re.Pattern[str]
    gives: re.Pattern[str]
    bonus: float
    heading: re.Pattern[str] | None = None  # a section about it
    avoid: re.Pattern[str] | None = None  # looks like an answer, is not (unless asked)
    section: bool = False  # a kind of section (fee, time, materials…) the documents have
    decisive: bool = True  # a sentence that gives it answers (a yes/no word alone does not)


def _re(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


MONEY = Focus(
    "money",
    asks=_re(r"费用|多少钱|几块钱|收费|收钱|要钱|花钱|花费|工本费|免费|交多少|缴多少|扣多少|"
             r"给多少|补多少|领多少|发多少|多少元|多少块|一个月多少|每月多少|一年多少|报销多少|"
             r"标准是多少|要交钱"),
    gives=_re(rf"{_NUM}\s*(?:多)?(?:元|块)|免费|免收|不收取?(?:任何)?费用?|不收费|工本费|"
              rf"自费|个人负担|{_NUM}\s*%|百分之|比例"),
    bonus=0.4,
    heading=_re(r"费用|收费|交多少|缴多少|领多少|多少钱|标准|金额|待遇|怎么算|计算"),
    section=True,
)
START = Focus(
    "start",
    asks=_re(r"生效|什么时候开始|何时开始|从什么时候|从哪天|哪天起|什么时候起|何时起|"
             r"起算|什么时候能用|什么时候可以用|多久能用|多久可以用|什么时候享受|多久享受"),
    gives=_re(r"生效|次月|当月|之日起|起享受|开始享受|起计发|起发放|起算|即时|当场|立即"),
    bonus=0.35,
    heading=_re(r"生效|什么时候|何时|等待期|开始"),
    avoid=_re(r"有效期"),
)
TIME = Focus(
    "time",
    asks=_re(r"多久|多长时间|几天|几个工作日|多少天|多少个工作日|什么时候|何时|几号|哪天|"
             r"时限|期限|到账|多快|要等|等多久|来得及|截止"),
    gives=_re(rf"{_NUM}\s*(?:个)?(?:工作日|日内|日|天|个月|周|星期|小时)|次月|当月|每月\d+日|"
              r"当场|即时|立等可取|即办|年底|上旬|中旬|下旬|季度"),
    bonus=0.35,
    heading=_re(r"多久|时限|时间|到账|期限|什么时候|何时|多长"),
    section=True,
)
PLACE = Focus(
    "place",
    asks=_re(r"在哪|哪里|去哪|哪儿|什么地方|哪个部门|哪个窗口|找谁|哪家|网上能|线上能|渠道"),
    gives=_re(r"窗口|网点|经办机构|大厅|服务中心|App|APP|小程序|平台|银行|街道|乡镇|社区|"
              r"所在地|参保地|就业地|常住地|户籍地|线上|网上|拨打|12333"),
    bonus=0.25,
    heading=_re(r"哪里|在哪|去哪|渠道|地点|哪办|怎么办理|办理方式"),
    section=True,
)
WHO = Focus(
    "who",
    asks=_re(r"谁|哪些人|什么人|哪类人|人群|对象|条件|资格|符合|够不够|满足"),
    gives=_re(r"年满|周岁|人员|符合|条件|满\d+年|累计缴费|户籍|本人|家属|近亲属|职工|居民"),
    bonus=0.2,
    heading=_re(r"条件|谁|对象|范围|哪些人|资格|申领条件"),
    section=True,
)
MATERIALS = Focus(
    "materials",
    asks=_re(r"材料|资料|证件|带什么|带啥|拿什么|准备什么|准备哪些|需要什么|要什么|手续|证明"),
    gives=_re(r"身份证|证件|证明|照片|申请表|户口簿|户口本|材料|原件|复印件|凭证|发票"),
    bonus=0.3,
    heading=_re(r"材料|带什么|准备|需要什么|手续"),
    section=True,
)
QUANTITY = Focus(
    "quantity",
    asks=_re(r"多少|几[年个天岁号次档成人]|几成|多久|多长|比例|百分之|标准|金额|多大|年限|上限|"
             r"下限|最低|最高|最多|最少|怎么算|如何计算|算法"),
    gives=_re(r"\d|百分之|[一二三四五六七八九十两半]+(?:个月|年|天|日|岁|元|倍|次|档|人)"),
    bonus=0.35,
)
# A yes or no: only a sentence naming what the question is about answers it (the picker
# checks that the sentence has the question's rarest word).
POLAR = Focus(
    "polar",
    asks=_re(r"吗|么|[不没]$|([\u4e00-\u9fff])[不没]\1|能不能|可不可以|是否|算不算|用不用|要不要|"
             r"有没有|会不会|还能|还可以|还用"),
    gives=_re(r"不能|不可以|不得|不需要|无需|不用|不会|不属于|不再|不予|不计|不影响|一般不|"
              r"可以|能够|需要|应当|必须|会被|属于|视同|不"),
    bonus=0.2,
    decisive=False,
)
HOW = Focus(
    "how",
    asks=_re(r"在哪|哪里|去哪|哪儿|怎么办|怎么弄|如何|怎么[办申领交查补开转退用操]|渠道|流程|步骤|"
             r"怎样|咋"),
    gives=_re(r"通过|到.{0,12}(?:办理|申请|窗口|机构|网点)|App|APP|小程序|窗口|平台|拨打|网点|线上|"
              r"经办机构"),
    bonus=0.15,
    heading=_re(r"流程|怎么|如何|办理|申领|渠道|方式|去哪|在哪|步骤"),
    decisive=False,
)

FOCUSES: tuple[Focus, ...] = (MONEY, START, TIME, PLACE, WHO, MATERIALS, QUANTITY, POLAR, HOW)


def focuses(question: str) -> tuple[Focus, ...]:
    """The foci of ``question``, in ``FOCUSES`` order; "when does it start" is no
    "how long" question."""
    found = [f for f in FOCUSES if f.asks.search(question)]
    if START in found and TIME in found and not re.search(r"多久|多长时间|几天|工作日", question):
        found.remove(TIME)
    # "交满多久才能领" asks how many years one must pay, not how long the office takes.
    if TIME in found and PAYING_HOW_LONG.search(question):
        found.remove(TIME)
    return tuple(found)


PAYING_HOW_LONG = re.compile(r"[交缴](?:了|满|够|费)?(?:多久|多长时间|几年|多少年)")


def off_focus(heading: str, asked: tuple[Focus, ...]) -> bool:
    """Whether ``heading`` is a section about something the question does not ask for
    (the materials section for a fee question)."""
    if not heading or not any(f.section for f in asked):
        return False
    if any(f.heading is not None and f.heading.search(heading) for f in asked):
        return False
    return any(f.section and f not in asked and f.heading is not None and f.heading.search(heading)
               for f in FOCUSES)


def gives_asked(sentence: str, asked: tuple[Focus, ...]) -> bool:
    """Whether ``sentence`` gives one of the decisive things the question asks for."""
    return any(f.decisive and f.gives.search(sentence) for f in asked)
