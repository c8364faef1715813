"""The one to three sentences of the retrieved passages that answer the question.

Extractive and offline: every sentence of the top passages is scored by

- the question's words it contains, weighted by how rare they are in the corpus
  (IDF over the documents' sentences; "社保" says little, "滞纳金" a lot), counting
  the passage's heading, which often states the question it answers;
- whether it has what the question asks for, its focus (``rag/focus.py``): a fee
  for "多少钱/收费" (an amount in 元, "免费"), a time for "多久/几天/到账", the day it
  starts for "什么时候生效" (not a validity period), a place for "在哪/去哪", the
  people and conditions for "谁/哪些人/条件", the materials for "带什么/材料", a number
  for "多少/几年/比例", a yes or no for "能…吗/会…不/用不用" (only in a sentence with
  the question's rarest word, what the yes or no is about), a channel for "怎么办";
- the section it is in: a heading about the question's focus (【费用】 for a fee)
  helps, a heading about another focus the question does not ask for (【需要的材料】
  for a fee question) holds the sentence back;
- the passage's rank in the search and its closeness to the question (cosine);
- a sentence of a passage other than the best-ranked and the closest must hold a
  fair share of the question's words at all.

A lead-in ending in a colon ("可以申领失业保险金：") is no answer and is skipped; a
definition ("失业保险金是对……的保障") answers only a "what is" question.

The best sentence is taken, then up to two more of the same document that score
nearly as well, within ``MAX_CHARS``; they are shown in their documents' order.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from rag import focus as F
from rag.stopwords import STOP_WORDS
from rag.store import Hit

MAX_SENTENCES = 3
MAX_CHARS = 160
KEEP_SHARE = 0.8  # a further sentence must score this share of the best
RANK = 0.1  # the prior of the best-ranked passage's sentences (fused ranking)
HEADING = 0.5  # the weight of the question's words in the passage's title and heading
CLOSENESS = 0.3  # the prior of the passage closest to the question (cosine)
MIN_OVERLAP = 0.2  # the share of the question's (weighted) words a sentence needs
MIN_CHARS = 8
SECTION_BONUS = 0.25  # a sentence under a heading about what the question asks (【费用】)
OFF_FOCUS = 0.35  # … under a heading about something it does not ask (【需要的材料】 for a fee)
DOC_FOCUS = 0.35  # the most a sentence's focus counts when it names the document

# Sentence ends, line ends, and a bullet list written on the line of its lead-in ("：- ").
_SPLIT = re.compile(r"(?<=[。！？；!?;])|\n|(?<=[：:])\s*(?=[-·•]\s)")
_BULLET = re.compile(r"^\s*(?:[-*+·•]|\d+[.、)）])\s*")
_STRONG = re.compile(r"\*\*(.+?)\*\*")

# A refusal ("一般不能领取"), and the weight of a word that names a case (辞职, 退休…).
NEGATIVE = re.compile(r"不能|不可以|不得|不予|不属于|一般不")
CASE_WEIGHT = 5.0
_CLAUSE = re.compile(r"[，,；;：:]|属于|的[，,]?")
# A definition ("失业保险金（俗称失业金）是对……的保障") answers only "what is" questions.
DEFINITION = re.compile(r"^[^，,。；]{1,24}?(?:（[^）]*）)?是(?:指|对|一种|由|为)")
DEFINITION_Q = re.compile(r"是什么|什么是|是啥|啥是|什么意思|啥意思|指什么|是干嘛|干什么的")
# …and for one, the sentence that says what the thing asked about is ("企业年金和职业年金是
# 单位和个人共同缴费……的补充养老保险", "长期护理保险（长护险）是为……"): its subject holds a
# word of the question.
DEFINES = re.compile(r"^(?P<subject>[^，,。；;：:]{1,24}?)(?:（[^）]*）)?(?:是|指|即)(?!否|不是)")
DEFINITION_BONUS = 0.4


@dataclass(frozen=True)
class KeySentence:
    text: str
    doc_id: str
    title: str
    position: tuple[str, int]  # (chunk id, sentence number): document order
    score: float
    item: bool = False  # it begins an item of a list (shown on a line of its own)


def sentences(text: str) -> list[str]:
    """A passage's sentences, Markdown bullets and emphasis removed."""
    return [s for s, _ in pieces(text)]


def pieces(text: str) -> list[tuple[str, bool]]:
    """A passage's sentences, each with whether it begins an item of a list."""
    out = []
    for part in _SPLIT.split(_STRONG.sub(r"\1", text)):
        bare = _BULLET.sub("", part).strip()
        if bare:
            out.append((bare, bool(_BULLET.match(part))))
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
        """Up to ``MAX_SENTENCES`` sentences of ``hits[:top]`` that answer ``question``, all
        from the document of the best one (one document speaks for the lead: two documents
        may give two numbers for one thing)."""
        terms = list(dict.fromkeys(_words(question)))
        if not terms or not hits:
            return []
        total = sum(self.weight(t) for t in terms)
        asked = F.focuses(question)
        # A yes or no answers the question only if it is about what the question names:
        # "主动辞职…一般不能领取" answers "主动辞职能领失业金吗", not "被辞退了能领吗".
        rarest = max(terms, key=self.weight)
        defines = bool(DEFINITION_Q.search(question))
        scored: list[KeySentence] = []
        doc_scores: dict[str, float] = {}
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
            section = sum(SECTION_BONUS for f in asked
                          if f.heading is not None and f.heading.search(hit.heading))
            if F.off_focus(hit.heading, asked):
                section -= OFF_FOCUS
            for i, (s, item) in enumerate(pieces(hit.text)):
                if len(s) < MIN_CHARS or s.endswith(("：", ":")):
                    continue
                if any(f.avoid is not None and f.avoid.search(s) and not f.avoid.search(question)
                       for f in asked):
                    continue  # looks like the answer and is not (a validity period for "生效")
                overlap = sum(self.weight(t) for t in terms if t in s) / total
                # A sentence is in context when it or its heading shares the question's words.
                context = sum(self.weight(t) for t in terms if t in s or t in hit.heading) / total
                own = overlap >= MIN_OVERLAP or hit.chunk_id in central
                if context < MIN_OVERLAP and not own:
                    continue
                bonus = sum(f.bonus for f in asked if f.gives.search(s)
                            and (f is not F.POLAR or rarest in s))
                base = overlap + HEADING * heading + prior
                if not defines and DEFINITION.search(s):
                    base -= 0.3
                if defines and _defines_asked(s, terms):
                    bonus += DEFINITION_BONUS
                if self._other_case(s, question):
                    base -= 0.3
                score = base + bonus + section
                # What names the document: the words the sentence itself shares, its
                # closeness, and a capped focus bonus (sections only choose within it).
                if own:
                    doc_scores[hit.doc_id] = max(doc_scores.get(hit.doc_id, -9.0),
                                                 base + min(bonus, DOC_FOCUS))
                scored.append(KeySentence(s, hit.doc_id, hit.title, (hit.chunk_id, i), score, item))
        if not scored:
            return []
        # The best document (by its sentences that share the question's words); there,
        # when some sentence gives what the question asks for (a fee, a time, a place…),
        # the lead is one of those, not the section's general opening.
        doc = (max(doc_scores, key=doc_scores.__getitem__) if doc_scores
               else max(scored, key=lambda k: k.score).doc_id)
        scored = [k for k in scored if k.doc_id == doc]
        scored = [k for k in scored if F.gives_asked(k.text, asked)] or scored
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


def _defines_asked(sentence: str, terms: Sequence[str]) -> bool:
    """Whether ``sentence`` says what a thing the question names is."""
    m = DEFINES.search(sentence)
    return m is not None and any(t in m.group(0) for t in terms)  # (its other name too)


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
