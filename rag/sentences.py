"""The one to three sentences of the retrieved passages that answer the question.

Extractive and offline: every sentence of the top passages is scored by

- the question's words it contains, weighted by how rare they are in the corpus
  (IDF over the documents' sentences; "社保" says little, "滞纳金" a lot), counting
  the passage's heading, which often states the question it answers;
- whether it has what the question asks for: a number for "多少/几年/比例/多久"
  (``NUMERIC``), a yes or no for "能…吗/会…不/用不用" (``POLAR``; only in a sentence
  with the question's rarest word, what the yes or no is about), a time for
  "什么时候/多久/几号" (``TIME``), a place or channel for "在哪/怎么办" (``WHERE``);
- the passage's rank in the search and its closeness to the question (cosine);
- a sentence of a passage other than the best-ranked and the closest must hold a
  fair share of the question's words at all.

A lead-in ending in a colon ("可以申领失业保险金：") is no answer and is skipped; a
definition ("失业保险金是对……的保障") answers only a "what is" question; a how or
where question prefers sentences under a procedure heading (办理流程, 怎么…).

The best sentence is taken, then up to two more that score nearly as well, within
``MAX_CHARS``; they are shown in their documents' order.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from rag.stopwords import STOP_WORDS
from rag.store import Hit

MAX_SENTENCES = 3
MAX_CHARS = 160
KEEP_SHARE = 0.8  # a further sentence must score this share of the best
RANK = 0.1  # the prior of the best-ranked passage's sentences (fused ranking)
CLOSENESS = 0.3  # the prior of the passage closest to the question (cosine)
MIN_OVERLAP = 0.2  # the share of the question's (weighted) words a sentence needs
MIN_CHARS = 8

_SPLIT = re.compile(r"(?<=[。！？；!?;])|\n")
_BULLET = re.compile(r"^\s*(?:[-*+·•]|\d+[.、)）])\s*")
_STRONG = re.compile(r"\*\*(.+?)\*\*")

NUMERIC_Q = re.compile(r"多少|几[年个天岁号次档]|几成|多久|多长|比例|百分之|标准|金额|多大|年限|上限|下限|"
                       r"最低|最高|最多|最少|几|怎么算|如何计算|算法")
NUMERIC = re.compile(r"\d|百分之|[一二三四五六七八九十两半]+(?:个月|年|天|日|岁|元|倍|次|档)")
POLAR_Q = re.compile(r"吗|么|[不没]$|([\u4e00-\u9fff])[不没]\1|能不能|可不可以|是否|算不算|用不用|要不要|"
                     r"有没有|会不会|还能|还可以|还用")
POLAR = re.compile(r"不能|不可以|不得|不需要|无需|不用|不会|不属于|不再|不予|不计|不影响|一般不|"
                   r"可以|能够|需要|应当|必须|会被|属于|视同|不")
TIME_Q = re.compile(r"什么时候|多久|多长时间|几号|哪天|期限|时限|到账|几个工作日|何时")
TIME = re.compile(r"日内|工作日|个月|次月|每月|当场|即时|立等|年底|季度|\d+日|\d+天|上旬|中旬|下旬")
WHERE_Q = re.compile(r"在哪|哪里|去哪|哪儿|怎么办|怎么弄|如何|怎么[办申领交查补]|渠道|流程")
WHERE = re.compile(r"通过|到.{0,12}(?:办理|申请|窗口|机构|网点)|App|APP|小程序|窗口|平台|拨打|网点|线上|"
                   r"经办机构")
# A refusal ("一般不能领取"), and the weight of a word that names a case (辞职, 退休…).
NEGATIVE = re.compile(r"不能|不可以|不得|不予|不属于|一般不")
CASE_WEIGHT = 5.0
_CLAUSE = re.compile(r"[，,；;：:]|属于|的[，,]?")
# A section on how to do something: where a how/where question's answer is.
PROCEDURE_HEADING = re.compile(r"流程|怎么|如何|办理|申领|渠道|方式|去哪|在哪|步骤")
# A definition ("失业保险金（俗称失业金）是对……的保障") answers only "what is" questions.
DEFINITION = re.compile(r"^[^，,。；]{1,24}?(?:（[^）]*）)?是(?:指|对|一种|由|为)")
DEFINITION_Q = re.compile(r"是什么|什么是|是啥|啥是|什么意思|啥意思|指什么|是干嘛|干什么的")


# (what the question asks for, what a sentence that gives it has, the bonus)
ASKS = ((NUMERIC_Q, NUMERIC, 0.35), (POLAR_Q, POLAR, 0.2), (TIME_Q, TIME, 0.3),
        (WHERE_Q, WHERE, 0.15))


@dataclass(frozen=True)
class KeySentence:
    text: str
    doc_id: str
    title: str
    position: tuple[str, int]  # (chunk id, sentence number): document order
    score: float


def sentences(text: str) -> list[str]:
    """A passage's sentences, Markdown bullets and emphasis removed."""
    out = []
    for part in _SPLIT.split(_STRONG.sub(r"\1", text)):
        part = _BULLET.sub("", part).strip()
        if part:
            out.append(part)
    return out


class SentencePicker:
    """Picks key sentences; ``corpus`` (the documents' texts) gives the word weights."""

    def __init__(self, corpus: Iterable[str] = ()) -> None:
        df: Counter[str] = Counter()
        n = 0
        for text in corpus:
            for s in sentences(text):
                n += 1
                df.update(set(_words(s)))
        self._n = n
        self._df = df

    def weight(self, word: str) -> float:
        if not self._n:
            return 1.0
        return math.log((self._n + 1) / (self._df.get(word, 0) + 1)) + 1.0

    def pick(self, question: str, hits: Sequence[Hit], *, top: int = 3) -> list[KeySentence]:
        """Up to ``MAX_SENTENCES`` sentences of ``hits[:top]`` that answer ``question``."""
        terms = list(dict.fromkeys(_words(question)))
        if not terms or not hits:
            return []
        total = sum(self.weight(t) for t in terms)
        wants = [(has, bonus) for asks, has, bonus in ASKS if asks.search(question)]
        # A yes or no answers the question only if it is about what the question names:
        # "主动辞职…一般不能领取" answers "主动辞职能领失业金吗", not "被辞退了能领吗".
        rarest = max(terms, key=self.weight)
        how = bool(WHERE_Q.search(question))
        defines = bool(DEFINITION_Q.search(question))
        scored: list[KeySentence] = []
        pool = hits[:top]
        cosines = [h.cosine for h in pool if h.cosine is not None]
        low, high = (min(cosines), max(cosines)) if cosines else (0.0, 0.0)
        # The best-ranked and the closest passage speak for themselves; other passages'
        # sentences must share the question's words.
        central = {pool[0].chunk_id, max(pool, key=lambda h: h.cosine or 0.0).chunk_id}
        for rank, hit in enumerate(pool):
            heading = sum(self.weight(t) for t in terms if t in f"{hit.title}{hit.heading}") / total
            closeness = ((hit.cosine - low) / (high - low)) if hit.cosine is not None and high > low else 0.0
            prior = RANK * (top - rank) / top + CLOSENESS * closeness
            if how and PROCEDURE_HEADING.search(hit.heading):
                prior += 0.2
            for i, s in enumerate(sentences(hit.text)):
                if len(s) < MIN_CHARS or s.endswith(("：", ":")):
                    continue
                overlap = sum(self.weight(t) for t in terms if t in s) / total
                if overlap < MIN_OVERLAP and hit.chunk_id not in central:
                    continue
                bonus = sum(b for has, b in wants if has.search(s)
                            and (has is not POLAR or rarest in s))
                score = overlap + 0.3 * heading + bonus + prior
                if not defines and DEFINITION.search(s):
                    score -= 0.3
                if self._other_case(s, question):
                    score -= 0.3
                scored.append(KeySentence(s, hit.doc_id, hit.title, (hit.chunk_id, i), score))
        if not scored:
            return []
        scored.sort(key=lambda k: k.score, reverse=True)
        best = scored[0]
        chosen = [best]
        used = len(best.text)
        for k in scored[1:]:
            if len(chosen) == MAX_SENTENCES or k.score < KEEP_SHARE * best.score:
                break
            if k.text in (c.text for c in chosen) or used + len(k.text) > MAX_CHARS:
                continue
            chosen.append(k)
            used += len(k.text)
        return sorted(chosen, key=lambda k: k.position)


    def _other_case(self, sentence: str, question: str) -> bool:
        """A refusal about a case the question does not name: "主动辞职…一般不能领取" for
        "我被辞退了能领失业金吗" (its first clause names the case)."""
        if not NEGATIVE.search(sentence):
            return False
        case = _CLAUSE.split(sentence, maxsplit=1)[0]
        return any(self.weight(w) >= CASE_WEIGHT and w not in question for w in _words(case))


def _words(text: str) -> list[str]:
    """Content words: jieba's search segmentation without stop words and lone characters
    (numbers kept: "15年", "0.5%")."""
    import jieba

    out = []
    for w in jieba.cut_for_search(text):
        w = w.strip()
        if not w or w in STOP_WORDS:
            continue
        if len(w) > 1 or w.isdigit():
            out.append(w)
    return out
