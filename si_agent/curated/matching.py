"""Whether a citizen's question is one a curated answer answers.

Both sides are reduced to a **key** first: NFKC, Traditional → Simplified
(``si_agent.chinese``), the knowledge channel's own normalisation (its term table and
homophone check, ``rag.query.QueryUnderstanding``: "失叶金咋领" → "失业金怎么领"),
polite fillers at either end dropped ("请问", "我想问一下", "您好", "谢谢"), then every
space and punctuation mark and the trailing particles (呢, 啊, 呀, 吧).

A question matches

1. **exactly** when its key is the key of a curated question or paraphrase; else
2. **fuzzily** when the character similarity of the keys (rapidfuzz's ``ratio``) is at
   least ``FUZZY_MIN`` and the keys agree on everything that changes an answer: the
   same domain words (the term table's and the businesses' words: 养老金 is not 失业金),
   the same numbers, the same negations (不, 没, 未…), and a key of ``FUZZY_MIN_CHARS``
   characters or more.

A question the term table marks to refuse never matches. The threshold and guards were
measured on the public question corpora (tests/curated/test_matching.py, docs/curated.md):
no question there is captured by an answer written for another question.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from rapidfuzz import fuzz, process

from si_agent.chinese import to_simplified
from si_agent.curated.model import CuratedAnswer

FUZZY_MIN = 90.0
FUZZY_MIN_CHARS = 6

_FILLERS = ("您好", "你好", "请问一下", "请问下", "请问", "我想问一下", "我想问下", "我想问",
            "想问一下", "想问下", "问一下", "问下", "麻烦问一下", "麻烦问下", "麻烦您", "麻烦你",
            "我想咨询一下", "我想咨询", "想咨询一下", "咨询一下", "咨询下", "请教一下", "请教",
            "打扰一下", "打扰了", "老师", "工作人员")
_GAP = r"[\s,，.。!！:：、~～?？]*"
_HEAD = re.compile(rf"^{_GAP}(?:(?:{'|'.join(map(re.escape, _FILLERS))}){_GAP})+")
_TAIL = re.compile(rf"(?:{_GAP}(?:谢谢您|谢谢你|谢谢了|谢谢|多谢|感谢))+{_GAP}$")
_NOT_WORD = re.compile(r"[\W_]+")
_PARTICLES = re.compile(r"[呢啊呀吧哈啦嘛哦]+$")
_NUMBERS = re.compile(r"\d+(?:\.\d+)?|[零一二两三四五六七八九十百千万]+(?=[年月日岁个次元天周号])")
_NEGATIONS = frozenset("不没未无非别莫勿")


@dataclass(frozen=True)
class Match:
    """A curated answer that answers a question: which, through which of its questions,
    how (``exact`` or ``fuzzy``) and how similar (100 for an exact match)."""

    answer: CuratedAnswer
    matched: str
    how: str
    score: float


@dataclass(frozen=True)
class _Entry:
    key: str
    text: str
    answer: CuratedAnswer


class Index:
    """The keys of a set of curated answers, ready to match against."""

    def __init__(self, entries: Sequence[_Entry]) -> None:
        self.entries = list(entries)
        self.exact = {e.key: e for e in self.entries}
        self.keys = [e.key for e in self.entries]


class Matcher:
    """Keys and matches (see the module docstring); ``understanding`` is the knowledge
    channel's (``rag.query.understanding_for``), None for no normalisation beyond
    Traditional → Simplified, fillers and punctuation."""

    def __init__(self, understanding=None, *, fuzzy_min: float = FUZZY_MIN) -> None:
        self.understanding = understanding
        self.fuzzy_min = fuzzy_min
        words: Iterable[str] = ()
        if understanding is not None:
            words = {*understanding.domain, *understanding.normaliser.vocabulary}
        self._words = sorted({to_simplified(w) for w in words if len(w) >= 2})
        self.key = lru_cache(maxsize=16384)(self._key)  # the stored questions' keys, once

    def _key(self, text: str) -> str:
        """``text`` reduced to what the match compares (``key``)."""
        text = to_simplified(unicodedata.normalize("NFKC", text or "")).lower()
        text = _strip_fillers(text)
        if self.understanding is not None and text:
            text = self.understanding.normaliser.normalise(text).text
            text = _strip_fillers(text)
        return _PARTICLES.sub("", _NOT_WORD.sub("", text))

    def index(self, answers: Iterable[CuratedAnswer]) -> Index:
        """The keys of every question and paraphrase of the enabled ``answers``."""
        entries = []
        for a in answers:
            if not a.enabled:
                continue
            for q in a.questions:
                key = self.key(q)
                if key:
                    entries.append(_Entry(key, q, a))
        return Index(entries)

    def refused(self, question: str) -> bool:
        """Whether the term table marks ``question`` to refuse (then nothing matches)."""
        if self.understanding is None:
            return False
        from rag.relevance import must_refuse

        return must_refuse(question, self.understanding.refuse)

    def match(self, question: str, index: Index) -> Match | None:
        """The curated answer ``question`` asks for, or None."""
        if not index.entries or self.refused(question):
            return None
        key = self._key(question)  # not cached: a citizen's question is not kept
        if not key:
            return None
        exact = index.exact.get(key)
        if exact is not None:
            return Match(exact.answer, exact.text, "exact", 100.0)
        if len(key) < FUZZY_MIN_CHARS:
            return None
        found = process.extract(key, index.keys, scorer=fuzz.ratio,
                                score_cutoff=self.fuzzy_min, limit=5)
        for _, score, at in found:  # best first
            entry = index.entries[at]
            if len(entry.key) >= FUZZY_MIN_CHARS and self.agree(key, entry.key):
                return Match(entry.answer, entry.text, "fuzzy", round(score, 1))
        return None

    def agree(self, a: str, b: str) -> bool:
        """Whether two keys name the same domain words, numbers and negations."""
        return (self._named(a) == self._named(b)
                and _NUMBERS.findall(a) == _NUMBERS.findall(b)
                and sorted(c for c in a if c in _NEGATIONS) == sorted(c for c in b if c in _NEGATIONS))

    def _named(self, key: str) -> frozenset[str]:
        return frozenset(w for w in self._words if w in key)


def _strip_fillers(text: str) -> str:
    return _TAIL.sub("", _HEAD.sub("", text)).strip()
