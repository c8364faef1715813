"""Questions in the middle of a business: which part of a message asks, and whether it
asks about the awaited field itself.

A citizen collecting a business asks without naming it ("这个收费不", "得准备些啥",
"多久能拿到"); the question form decides, not the words of one business: a clause
with a question word or particle (``lexicon.HOW``, ``lexicon.YES_NO``) asks, the other
clauses may state values ("杭州的，备案完多久生效啊": 杭州 is the awaited city, the rest
a question). A tag question ("对吗", "行不行") after a value only checks it, and asks
nothing to look up.

A question about the field asked for ("这个怎么填", "咋填", "编号在哪能看到", "哪个银行好")
is answered from the field's ``help:`` (without one, its prompt is asked again); looking
for something ("在哪看") or choosing ("哪个好") counts when the message names the field by
one of its words or its label's head noun ("编号", "银行") or points at it ("这个"); any
question about the place a city field asks for ("是不是得先在那边交上才能转") counts.
"""

from __future__ import annotations

import re

from si_agent.config.model import FieldDef
from si_agent.engine import lexicon as L
from si_agent.engine.quantities import Quantity, slot_measures
from si_agent.engine.rules.mentions import cue_words
from si_agent.validators import extract

# How to fill in what is asked: "怎么填", "咋写", "填啥", "选哪个好".
FILL_HOW = re.compile(r"(?:怎么|咋|怎样|如何)(?:填|写|选|弄)|(?:填|写)(?:什么|啥|哪个|哪一?年)"
                      r"|随便(?:填|写|选)")
# Where to find something: "在哪能看到", "去哪儿查", "哪里可以找到".
WHERE_FIND = re.compile(r"(?:哪|哪里|哪儿)(?:里|儿)?(?:能|可以|才能|去|才)?(?:看|找|查)")
# Which option to choose: "哪个银行好", "选哪种", "哪家近一点".
WHICH = re.compile(r"哪(?:一)?[个家种样类档]|选哪|怎么选|选什么|选啥")
# Pointing at the field asked for.
# What it is for: "这卡跟银行有啥关系", "要手机号干嘛用", "为啥要选银行".
WHAT_FOR = re.compile(r"(?:啥|什么)(?:关系|用处|作用)|干(?:啥|嘛)(?:用|的)|有(?:啥|什么)用"
                      r"|为(?:什么|啥)(?:要|得|还要)")
_POINTING = re.compile(r"这个|这里|这一?项|这儿|这玩意|这东西|这个数|这数")
# Pointing at the place a city field asks for: "是不是得先在那边交上", "那里能直接结算吗".
_PLACE_POINTING = re.compile(r"那边|那里|那儿|那头|当地|那个城市|那座城市")
# A question that only checks what was just said: "对吗", "是不是", "行不行", "没错吧".
TAG_QUESTION = re.compile(
    r"(?:对|是|行|好|可以|没错|没问题|这样)(?:不\w)?(?:吗|吧|么|呢|不)?[啊呀吧哈]?")


def asks_clause(clause: str) -> bool:
    """Whether a clause asks something (not a bare "没有", not a tag question)."""
    b = L.bare(clause).rstrip("?？")
    return (L.is_question(clause) and not L.is_conversational(clause)
            and not TAG_QUESTION.fullmatch(b))


def split(text: str) -> tuple[str, str]:
    """``(statement, question)``: the clauses that state, and the clauses that ask."""
    parts = L.clauses(text)
    asked = [c for c in parts if asks_clause(c)]
    stated = [c for c in parts if c not in asked]
    return "，".join(stated), "，".join(asked)


# Asking for the kind of value a field holds: an age ("到底多少岁能退"), a day ("是写最后
# 上班那天还是合同上那天").
_ASKS_AGE = re.compile(r"多少岁|几岁|多大岁数|多大年纪|哪个岁数")
_ASKS_DAY = re.compile(r"[哪那]一?天|几号|哪个日子|什么日子|啥日子|哪个日期|什么日期|啥日期")
# ... of another event than the field's: when money arrives, a card comes, a review ends
# ("钱哪天到账", "多久能拿到卡"): a knowledge question, not one about the field.
_OTHER_EVENT = re.compile(r"到账|到卡|发放|发钱|打款|打钱|审核|审批|办完|办好|批下来|拿到|收到|领到|寄到")


def asks_what_field_holds(field: FieldDef, text: str) -> bool:
    """Whether a question asks about the very thing ``field`` holds, so that the field's
    ``help`` answers it first: it names the field by its label or the label's head noun
    ("呢个档次之后仲可唔可以改", "退休年龄…"), or asks for a value of the field's kind (an
    age, a day). (The caller makes sure the message gives no value for it.)"""
    if not (field.help and asks_clause(text)):
        return False
    if field.label in text or (len(field.label) > 2 and field.label[-2:] in text):
        return True
    if _OTHER_EVENT.search(text):
        return False
    if field.type == "date":
        return bool(_ASKS_DAY.search(text))
    return slot_measures(field) is Quantity.AGE and bool(_ASKS_AGE.search(text))


def asks_about_field(field: FieldDef, text: str) -> bool:
    """Whether ``text`` asks how to fill ``field`` or where to find its value."""
    if FILL_HOW.search(text):
        return True
    if (field.type == "city" and _PLACE_POINTING.search(text) and asks_clause(text)
            and not extract("city", text)):
        return True  # a question about the place asked for, naming none
    if not (WHERE_FIND.search(text) or WHICH.search(text) or WHAT_FOR.search(text)):
        return False
    # The field's words, and the head noun its label ends with (合作银行 → 银行).
    words = (*cue_words(field), field.label[-2:])
    return bool(_POINTING.search(text)) or any(len(w) >= 2 and w in text for w in words)
