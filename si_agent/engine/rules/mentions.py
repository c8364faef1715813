"""Which field or step a message names, and whether a whole message fits a field.

A field answers to its label, the label's usual short forms ("新手机号码" →
"手机号"), its cue words and, for corrections, the common word for its type
("名字", "卡号"). A step answers to its label.
"""

from __future__ import annotations

import re
from functools import lru_cache

from si_agent.config.model import Business, FieldDef
from si_agent.engine import lexicon as L
from si_agent.validators import check

_BARE_NAME_MAX = 5  # without a middle dot, a longer run is a sentence, not a name
# Words between a cue and its value: "地址的话就寄到江苏…", "地址是：…".
_CUE_FILLER = re.compile(r"(?:的话|就是|就|是|叫|为|在|寄到|寄往|:|：|,|，|\s)*")
_NAME_CUES = re.compile(r"我叫|我是|姓名|名字|本人")
# What citizens call a field of a type, besides its label and cues.
_TYPE_WORDS = {
    "name": ("名字", "姓名", "名"), "idcard": ("身份证号", "身份证"), "phone": ("手机号", "手机", "电话"),
    "bank_card": ("银行卡号", "银行卡", "卡号"), "date": ("日期", "时间"), "year": ("年份",),
}


def after_filler(text: str, at: int) -> int:
    """Where the value starts: after the filler words that follow a cue at ``at``."""
    filler = _CUE_FILLER.match(text, at)
    return filler.end() if filler else at


@lru_cache(maxsize=1024)
def cue_words(field: FieldDef) -> tuple[str, ...]:
    """The words that tie a value to ``field``: its label, the label without a
    suffix ("号码", "号", "名称"), and its cues."""
    label = field.label
    short = label.removesuffix("号码").removesuffix("号").removesuffix("名称")
    return tuple(w for w in dict.fromkeys((label, short, *field.cues)) if w)


@lru_cache(maxsize=1024)
def label_names(label: str) -> frozenset[str]:
    """A label and its usual short forms: 新手机号码 → 手机号码, 手机号, 新手机, 手机."""
    names = {label}
    for prefix in ("新", "原", "现"):
        names |= {n.removeprefix(prefix) for n in names}
    for suffix in ("号码", "名称"):
        names |= {n.removesuffix(suffix) for n in names}
    names |= {n + "号" for n in names if label.endswith("号码")}
    return frozenset(n for n in names if len(n) >= 2)


def mentioned_field(business: Business, text: str) -> str | None:
    """The field whose label (or a shortened label) the text names, longest first."""
    best: tuple[int, str] | None = None
    for f in business.fields:
        for n in label_names(f.label):
            if n in text and (best is None or len(n) > best[0]):
                best = (len(n), f.key)
    return best[1] if best else None


def _field_words(field: FieldDef) -> tuple[str, ...]:
    return (*cue_words(field), *_TYPE_WORDS.get(field.type, ()))


def named_field(business: Business, text: str) -> str | None:
    """The field a correction names by a cue or a common word ("地址写错了", "名字不对"),
    when only one field answers to the longest such word (ties go to the field more
    of whose words are named)."""
    scores: dict[str, tuple[int, int]] = {}
    for f in business.fields:
        words = [w for w in _field_words(f) if len(w) >= 2 and w in text]
        if words:  # the longest word, then how many ("开始年份": 开始 and 年份)
            scores[f.key] = (max(map(len, words)), len(words))
    if not scores:
        return None
    top = max(scores.values())
    keys = [k for k, v in scores.items() if v == top]
    return keys[0] if len(keys) == 1 else None


def after_label(business: Business, key: str | None, text: str) -> str:
    """The part of the text after the named label (where the new value is)."""
    if key is None:
        return text
    f = business.field(key)
    for n in sorted(_field_words(f), key=len, reverse=True):
        at = text.find(n)
        if at >= 0:
            rest = text[at + len(n):]
            return rest.lstrip("是为成：:，, ").strip() or ""
    return text


def strip_cue(field: FieldDef, text: str) -> str:
    """The answer without a leading cue ("地址是…" → "…")."""
    for cue in sorted(cue_words(field), key=len, reverse=True):
        if text.startswith(cue):
            return text[after_filler(text, len(cue)):].strip() or text
    return text


def whole_message_fits(field: FieldDef, text: str) -> bool:
    """Whether the whole message can be the answer for ``field``."""
    if L.is_conversational(text) or L.NON_ANSWER.search(text):
        return False
    if field.type == "name" and (L.is_question(text) or _NAME_CUES.search(text)
                                 or (len(text) > _BARE_NAME_MAX and "·" not in text)):
        return False
    if field.type == "text" and not field.pattern and (L.is_question(text) or L.is_cancel(text)):
        return False
    return check(field.type, text, **field.validator_options()).ok


def mentioned_step(business: Business, text: str) -> str | None:
    """The step whose label the text names ("修改人脸照片" → face_photo), longest first."""
    best: tuple[int, str] | None = None
    for step in business.steps:
        for n in label_names(step.label):
            if n in text and (best is None or len(n) > best[0]):
                best = (len(n), step.id)
    return best[1] if best else None
