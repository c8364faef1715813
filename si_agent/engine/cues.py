"""Correction, negation, hedge and other-person cues: where a value's polarity changes.

One place for the words that change what a value in a message means, used by the
rule engine's extraction, the consultation's slots and the decision's sureness:

- a **correction frame** takes a value back and introduces the new one ("不对，是
  张伟", "还是改回张伟吧", "刘阳是错的 应该是刘洋", "名字应该是张伟"): the value
  is what follows the last frame, never the frame itself;
- a **negation** scopes over the option it stands before ("不是临时的", "不要
  最低档", "我可不是什么顶梁柱", "哦不对") or a **rejection** over the option it
  follows in the same clause ("工行太远", "寿险先不考虑");
- a **rhetorical denial** ("我哪算啥顶梁柱") reads as the plain one (不算), not as a
  question;
- a **hedge** ("说不好算不算") and a **filler** ("哦对了", by the way) state no value;
- an **other person** after a first-person phrase makes it possessive ("靠我老公"
  is not "靠我"), and one named as the subject ("主要是我先生挣钱") answers no to a
  yes/no question about the citizen.

These are recognition vocabularies, like ``lexicon``; this module knows no business.
"""

from __future__ import annotations

import re

_SEP = r"[\s,，。.!！~～、;；:：…]"
# Words that take a value back: "不对", "说错了", "刘阳是错的", "手机号给错了".
TAKE_BACK = (
    "不对", "错了", "说错了", "写错了", "打错了", "输错了", "填错了", "给错了", "弄错了", "搞错了",
    "打错字了", "写错字了", "输错字了", "错了一个字", "错了个字", "有个错字", "有错别字",
    "记错了", "报错了", "说岔了", "是错的", "有误", "不不", "哦不", "口误", "更正一下", "纠正一下",
    "说少了", "说多了", "少说了", "多说了", "说低了", "说高了",
)
# Words that introduce the new value: "应该是张伟", "改回张伟", "换成建行".
REPLACE = (
    "应该是", "应该为", "应为", "应该叫", "其实是", "实际是", "改回来", "改回", "改成", "改为", "换成",
    "换回", "更正为", "纠正为", "我是说", "我的意思是", "重新说", "正确的是",
)
# After a frame, before the value: "不对，是张伟", "不不，选建行", "还是改回…".
_LEAD = re.compile(rf"(?:{_SEP}|还是|就是|是|选|要|用|叫|为|改|换|那就|就)*")
_TAIL = re.compile(rf"(?:{_SEP}|吧|啊|呀|哈|啦|呢|哦|嘛|了|才对|才是对的|的)+$")
# "不是，是张伟": 不是 on its own, then the value; "不是，没孩子" answers a yes/no
# question, and "不是杭州是上海" takes a value back in place (``extraction``).
_BARE_NO = r"不是(?:的)?" + _SEP + r"+(?=是)"
# Short take-backs stand apart: "不对，…", "不对不对", "哦不是", not "不对外开放".
_APART = rf"(?={_SEP}|$|不|是|还|应|我|啊|呀|哈|吧|了|哦|呢|的)"
_SHORT = ("不对", "不不", "哦不")
FRAME = re.compile("|".join([
    *(re.escape(w) + (_APART if w in _SHORT else "")
      for w in sorted((*TAKE_BACK, *REPLACE), key=len, reverse=True)),
    _BARE_NO]))
# "不是张伟，是张炜", "参保地不是杭州是上海": the old value, then the new one.
NOT_BUT = re.compile(rf"不是(?P<old>[^，,。；;\s是]{{1,12}}?)(?:{_SEP}*而?是|{_SEP}+应该是)(?P<new>.+)$")
# A reproach that a value is wrong, then the right one: "转入城市怎么写成苏州了？我要转的是
# 无锡" (the old value follows 写成; the new one is in the next clause).
WRONGLY = re.compile(
    rf"怎么(?:给我|又)?(?:写|填|弄|变|搞|打|录|记|输)成了?(?P<old>[^，,。？?！!\s]{{1,12}}?)了?"
    rf"(?:{_SEP}|[？?！!])+(?P<new>.+)$")
# An apology after the value: "应该是南京，我说错了" (the value stands before it).
_APOLOGY = re.compile(rf"{_SEP}+(?:我|刚才|刚刚|前面|之前|上面|是我)*$")
# A correction anywhere in the message (for sureness and the never-store guard).
CORRECTION = FRAME

# Negators standing before what they negate, with the words allowed between:
# "不是旅游", "不要最低档", "我可不是什么顶梁柱", "不对" (对 negated).
_NEGATOR = re.compile(
    r"(?:(?:不是|不算|并不是|并非|算不上|说不上|谈不上|称不上)(?:家里|家中|我们家|咱家)?的?"
    r"|(?:不是|不算|并不是|并非|不要|不用|不选|不想要|不想|不考虑|不需要|没有|没|别|非|不|除了|除去)"
    r"(?:什么|很|太|那么|这个|那个|那种|是|要|选|用|算|去|转到|转去|回|在|办|从)?)$")
# A rejection after an option in the same clause: "工行离我家太远", "寿险先不考虑".
_REJECTION = re.compile(
    r"^[^，,。；;！!？?\s]{0,6}?(?:先?不考虑|不要了?|不用了?|不需要|不行|不方便|太远|太贵|太麻烦|不去了?|不选了?|"
    r"不合适|不划算|算了|不想要|免了|排除|除外|pass|就?拉倒|不整了?|不上了?|省了)")
_CLAUSE_START = re.compile(rf".*{_SEP}", re.DOTALL)

# A rhetorical question that denies ("我哪算啥顶梁柱", "他哪是什么经济支柱", "我算啥
# 顶梁柱"): said by a person of themselves or of "this", it asks nothing; it reads as
# 不算 ("哪个是" asks which one: not after a person).
RHETORICAL = re.compile(
    r"(?<=[我他她俺咱这那])(?:哪里|哪儿|哪)(?:算|是|能算|称得上|谈得上|够得上|配)(?:得上)?(?:是)?"
    r"(?:啥|什么)?(?![，,。？?！!\s]|$)"
    r"|(?<=[我他她俺咱])算(?:啥|什么)(?=[\u4e00-\u9fff])(?!时|意思)")


def plain_negation(text: str) -> str:
    """``text`` with a rhetorical denial read as the plain one: "我哪算啥顶梁柱啊" →
    "我不算顶梁柱啊" (positions may shift)."""
    return RHETORICAL.sub("不算", text)


# A hedge: neither yes nor no ("说不好算不算", "也不一定", "可能算吧").
HEDGE = re.compile(r"说不好|说不准|说不上|不好说|不一定|不确定|拿不准|算不算|算是吧|可能算|也许|或许|差不多吧")
# A clause that is only a filler: "哦对了" (by the way), "对了对了", "那个".
FILLER = re.compile(r"(?:哦|噢|喔|啊|哎|诶|欸|嗯)*(?:对了)+(?:对了|啊|呀)*")
# Another person, after a first-person phrase ("靠我老公") or as the subject.
KIN = (r"先生|老公|老婆|爱人|丈夫|妻子|媳妇|对象|另一半|配偶|父母|爸妈|爸爸|妈妈|爸|妈|家人|"
       r"儿子|女儿|哥哥|姐姐|弟弟|妹妹|公公|婆婆|岳父|岳母")
_KIN_AFTER = re.compile(rf"^(?:{KIN})")
# "主要是我先生挣钱", "家里靠我老公", "都是老婆在赚": the subject is someone else.
OTHER_SUBJECT = re.compile(
    rf"(?:主要|全|都|全靠|就)?(?:是|靠|由|指望)(?:我|我们家|我家)?(?:的)?(?:{KIN})|"
    rf"(?:{KIN})(?:在|主要|一个人)?(?:挣|赚|养家|撑|工作|上班|收入)")


def is_correction(text: str) -> bool:
    """Whether ``text`` takes a value back or introduces a new one."""
    return bool(CORRECTION.search(text))


def corrected_value(text: str) -> str | None:
    """What follows the last correction frame, without particles: "还是改回张伟吧" →
    "张伟", "刘阳是错的 应该是刘洋" → "刘洋"; None without a frame or a value after it
    ("哦不对")."""
    frames = list(FRAME.finditer(text))
    if not frames:
        return None
    last = frames[-1]
    lead = _LEAD.match(text, last.end())  # always matches (maybe empty)
    rest = _TAIL.sub("", text[lead.end() if lead else last.end():]).strip()
    if rest:
        return rest
    head = text[: last.start()]
    apology = _APOLOGY.search(head)
    if apology and len(frames) > 1 and frames[-2].group() in REPLACE:
        return corrected_value(head[: apology.start()])  # "应该是南京，我说错了"
    return None


def drop_frames(text: str) -> str:
    """``text`` without its correction frames and the words leading to the value (是,
    选): "年龄说错了，应该是36" → "年龄，36", "保额还是改成100万吧" → "保额还是100万吧"."""
    out, at = [], 0
    for m in FRAME.finditer(text):
        lead = _LEAD.match(text, m.end())
        out.append(text[at:m.start()])
        at = lead.end() if lead else m.end()
        if text[at - 1:at] in "，,。 " and out[-1] and out[-1][-1] not in "，,。 ":
            out.append("，")  # keep the clauses apart
    out.append(text[at:])
    return "".join(out)


def continues(text: str, end: int) -> bool:
    """Whether a short yes/no word ending at ``end`` goes on into a longer phrase in the
    same clause ("我是做设计的", "对我来说"), so it is no answer by itself."""
    nxt = text[end:end + 1]
    return bool(nxt) and "\u4e00" <= nxt <= "\u9fff" and nxt not in _PARTICLES


_PARTICLES = "的啊呀吧哈呢嘛了哦噢嗯"


def not_but(text: str) -> tuple[str, str, str] | None:
    """(words before, old value, new value) of "…不是X，是Y": "参保地不是杭州是上海" →
    ("参保地", "杭州", "上海"), or of a reproach "转入城市怎么写成苏州了？我要转的是无锡" →
    ("转入城市", "苏州", "我要转的是无锡"); None otherwise."""
    m = NOT_BUT.search(text) or WRONGLY.search(text)
    if m is None:
        return None
    new = _TAIL.sub("", m.group("new")).strip()
    return (text[: m.start()], m.group("old"), new) if new else None


def before_frame(text: str) -> str:
    """The part of ``text`` before its first correction frame ("名字应该是…" → "名字")."""
    m = FRAME.search(text)
    return text[: m.start()] if m else text


def negated(text: str, start: int, end: int) -> bool:
    """Whether the mention ``text[start:end]`` stands in a negation's scope: a negator
    just before it or a rejection just after it, in the same clause."""
    before = text[:start]
    clause_start = _CLAUSE_START.match(before)
    head = before[clause_start.end():] if clause_start else before
    if _NEGATOR.search(head[-6:]):
        return True
    return bool(_REJECTION.search(text[end:]))


def possessive(text: str, end: int) -> bool:
    """Whether a first-person phrase ending at ``end`` goes on with another person
    ("靠我" in "靠我老公"): then it is not about the citizen."""
    return text[end - 1:end] == "我" and bool(_KIN_AFTER.search(text[end:]))


def other_subject(text: str) -> bool:
    """Whether ``text`` names someone else as the subject ("主要是我先生挣钱")."""
    return bool(OTHER_SUBJECT.search(text))


def is_hedge(text: str) -> bool:
    return bool(HEDGE.search(text))


def is_filler(clause: str) -> bool:
    """A clause that is only a filler ("哦对了"): it states nothing."""
    return bool(FILLER.fullmatch(re.sub(_SEP, "", clause)))


def strip_fillers(text: str) -> str:
    """``text`` without filler clauses ("哦对了，重疾险…" → "，重疾险…"), same length."""
    return re.sub(rf"(?:(?<={_SEP})|^)(?:哦|噢|喔|啊|哎|诶|欸|嗯)*对了(?={_SEP}|$)",
                  lambda m: " " * len(m.group()), text)


def touched(text: str) -> bool:
    """Whether ``text`` holds a correction, hedge, filler or other-person cue (the model
    reads those better than rules; negations are checked against the mentions they
    scope over)."""
    return (is_correction(text) or is_hedge(text) or strip_fillers(text) != text
            or other_subject(text))
