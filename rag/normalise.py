"""Typos and dialect in a question, put right before retrieval.

Three passes, each recorded as ``Correction`` data:

0. **pinyin typed as letters**: a run of Latin letters that spells domain words
   in toneless pinyin is written in characters ("shebaoka" → "社保卡",
   "yanglaojin renzheng" → "养老金认证"); any other run ("App", "ok") stays;
1. **the term table** (``_terms.yaml``, ``rag/terms.py``): literal variants
   replaced by their right word, longest first ("咋整" → "怎么办", "俺" → "我");
2. **homophones** (pypinyin): a run of 2–6 characters that reads like a
   domain word but is written differently ("失叶金" → "失业金", "医报" → "医保"),
   where the domain words are the table's right words plus any vocabulary the
   caller adds (business names and keywords, document titles).

The homophone pass must not touch correct text, so a run is replaced only when
it differs from the word in at most one character (two for words of four or
more), each character that differs reads like the word in its usual reading
(有 is "you", never its rare "wei"), it is not a dictionary word itself
(jieba's dictionary: "事业" stays "事业"), and it does not cut through a
dictionary word ("他是业主" keeps "业主": "是业" is not "失业"). The domain
words are the table's domain list, the right words that contain one, and the
caller's vocabulary; dialect targets such as "为什么" are not among them. Without pypinyin installed the second pass is
skipped (one warning); so is it without jieba.
"""

from __future__ import annotations

import logging
import re
import threading
from bisect import bisect_right
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache, lru_cache

from rag.terms import TermTable

log = logging.getLogger(__name__)

MIN_WORD = 2
MAX_WORD = 6
MAX_SPELLING = 6 * MAX_WORD  # letters: the longest syllable (zhuang) times the longest word
MAX_RUN = 120  # letters typed without a break that are still read as pinyin
_HAN = re.compile(r"[\u4e00-\u9fff]")
_LETTERS = re.compile(r"[A-Za-z]{2,}(?:\s+[A-Za-z]{2,})*")


@dataclass(frozen=True)
class Correction:
    """One replacement: where in the input, what was there, what it became, and why."""

    start: int
    end: int
    original: str
    replacement: str
    source: str  # "table" or "pinyin"


@dataclass(frozen=True)
class Normalised:
    """A question with its typos and dialect put right."""

    original: str
    text: str
    corrections: tuple[Correction, ...] = ()


class Normaliser:
    """Applies the term table, then the homophone check (see the module docstring)."""

    def __init__(self, table: TermTable | None = None, vocabulary: Iterable[str] = (), *,
                 pinyin: bool = True) -> None:
        self.table = table or TermTable()
        variants = sorted(self.table.corrections, key=len, reverse=True)
        self._variants = re.compile("|".join(map(re.escape, variants))) if variants else None
        # Homophones are put right towards domain words only ("为什么" is no target).
        domain = [w for w in self.table.words if any(d in w for d in self.table.domain)]
        words = [*domain, *self.table.domain, *vocabulary]
        self.vocabulary = frozenset(w for w in words
                                    if MIN_WORD <= len(w) <= MAX_WORD and _HAN.search(w))
        self.use_pinyin = pinyin
        self._index: dict[tuple[int, str], list[tuple[str, tuple[str, ...]]]] | None = None
        self._spelt: dict[str, str] | None = None
        self._lock = threading.Lock()

    def warm(self) -> None:
        """Load pypinyin, jieba's dictionary and the homophone index now (a second or more
        on a busy machine), so the first question does not wait for them."""
        if self.use_pinyin and self._homophone_index():
            _jieba().dt.check_initialized()

    def normalise(self, text: str) -> Normalised:
        """``text`` with the table's variants and homophone typos replaced."""
        text = text or ""
        fixed, spelt = self._apply_letters(text) if self.use_pinyin else (text, [])
        fixed, table = self._apply_table(fixed)
        fixed, sounds = self._apply_pinyin(fixed) if self.use_pinyin else (fixed, [])
        return Normalised(original=text, text=fixed, corrections=(*spelt, *table, *sounds))

    # -- pinyin typed as letters ----------------------------------------------------

    def _apply_letters(self, text: str) -> tuple[str, list[Correction]]:
        if not _LETTERS.search(text) or not self._homophone_index():
            return text, []
        spelt = self._spelt_index()
        found: list[Correction] = []

        def replace(m: re.Match) -> str:
            words = _segment(re.sub(r"\s+", "", m.group()).lower(), spelt)
            if words:
                word = "".join(words)
                found.append(Correction(m.start(), m.end(), m.group(), word, "pinyin"))
                return word
            # Not all domain words ("yanglaojin zenme renzheng"): each space-separated
            # word that spells domain words is replaced, the others stay.
            out = []
            for t in re.finditer(r"\S+|\s+", m.group()):
                words = None if t.group().isspace() else _segment(t.group().lower(), spelt)
                if words:
                    word = "".join(words)
                    found.append(Correction(m.start() + t.start(), m.start() + t.end(),
                                            t.group(), word, "pinyin"))
                out.append("".join(words) if words else t.group())
            return "".join(out)

        return _LETTERS.sub(replace, text), found

    def _spelt_index(self) -> dict[str, str]:
        """Toneless pinyin without spaces → the one domain word spelt so."""
        with self._lock:
            if self._spelt is None:
                spelt: dict[str, set[str]] = defaultdict(set)
                for entries in self._index.values():
                    for word, syllables in entries:
                        spelt["".join(syllables)].add(word)
                self._spelt = {k: next(iter(v)) for k, v in spelt.items() if len(v) == 1}
            return self._spelt

    # -- the table ----------------------------------------------------------------

    def _apply_table(self, text: str) -> tuple[str, list[Correction]]:
        if self._variants is None:
            return text, []
        found: list[Correction] = []

        def replace(m: re.Match) -> str:
            word = self.table.corrections[m.group()]
            found.append(Correction(m.start(), m.end(), m.group(), word, "table"))
            return word

        return self._variants.sub(replace, text), found

    # -- homophones ---------------------------------------------------------------

    def _apply_pinyin(self, text: str) -> tuple[str, list[Correction]]:
        if not _HAN.search(text):
            return text, []
        index = self._homophone_index()
        if not index:
            return text, []
        tokens = _tokens(text)
        found: list[Correction] = []
        i = 0
        out: list[str] = []
        while i < len(text):
            best = self._best_at(text, i, index, tokens)
            if best is None:
                out.append(text[i])
                i += 1
                continue
            end, word = best
            found.append(Correction(i, end, text[i:end], word, "pinyin"))
            out.append(word)
            i = end
        return "".join(out), found

    def _best_at(self, text: str, i: int, index, tokens) -> tuple[int, str] | None:
        """The longest domain word the run starting at ``i`` is a homophone typo of."""
        for reading in _readings(text[i]):
            for length in range(min(MAX_WORD, len(text) - i), MIN_WORD - 1, -1):
                for word, syllables in index.get((length, reading), ()):
                    run = text[i:i + length]
                    if run == word or run in self.vocabulary:
                        continue
                    if _typo_of(run, word, syllables) and _clean_cut(i, i + length, tokens):
                        return i + length, word
        return None

    def _homophone_index(self):
        with self._lock:
            if self._index is None:
                self._index = self._build_index()
            return self._index

    def _build_index(self):
        try:
            import jieba  # noqa: F401  (the dictionary that keeps real words unchanged)
            from pypinyin import Style, lazy_pinyin
        except ImportError as exc:
            log.warning("%s is not installed: homophone typos are not corrected "
                        "(the rag extra installs it)", exc.name)
            self.use_pinyin = False
            return {}
        index: dict[tuple[int, str], list[tuple[str, tuple[str, ...]]]] = defaultdict(list)
        for word in sorted(self.vocabulary):
            syllables = tuple(lazy_pinyin(word, style=Style.NORMAL))
            if len(syllables) == len(word):
                index[(len(word), syllables[0])].append((word, syllables))
        return dict(index)


# -- helpers -------------------------------------------------------------------------

def _segment(letters: str, spelt: dict[str, str]) -> list[str] | None:
    """``letters`` as a sequence of domain words (fewest words), or None if it is not one.

    A word's spelling is at most ``MAX_SPELLING`` letters, so the work is linear in the
    length; a run longer than ``MAX_RUN`` letters is no question typed in pinyin."""
    if len(letters) > MAX_RUN:
        return None
    best: list[list[str] | None] = [None] * (len(letters) + 1)
    best[0] = []
    for end in range(1, len(letters) + 1):
        for start in range(max(0, end - MAX_SPELLING), end):
            head = best[start]
            word = spelt.get(letters[start:end])
            if head is not None and word and (best[end] is None or len(head) + 1 < len(best[end])):
                best[end] = [*head, word]
    return best[len(letters)] or None


@lru_cache(maxsize=8192)
def _readings(char: str) -> tuple[str, ...]:
    """Every toneless reading of a character (polyphones have several); () for non-Han."""
    if not _HAN.match(char):
        return ()
    from pypinyin import Style, pinyin

    return tuple(dict.fromkeys(pinyin(char, style=Style.NORMAL, heteronym=True)[0]))


@lru_cache(maxsize=8192)  # a long question repeats its runs: each is judged once
def _typo_of(run: str, word: str, syllables: tuple[str, ...]) -> bool:
    """Whether ``run`` is a homophone typo of the domain word ``word``."""
    return _sounds_like(run, word, syllables) and _few_differences(run, word) and not _is_word(run)


def _sounds_like(run: str, word: str, syllables: tuple[str, ...]) -> bool:
    """Every character of ``run`` reads as ``word``'s syllable; a character that differs
    from the word's must do so in its usual reading (有 is "you", not the rare "wei")."""
    for c, w, s in zip(run, word, syllables, strict=True):
        readings = _readings(c)
        if not readings or (s not in readings if c == w else s != readings[0]):
            return False
    return True


def _few_differences(run: str, word: str) -> bool:
    """At least one character in common, and at most one (two in long words) different."""
    different = sum(a != b for a, b in zip(run, word, strict=True))
    return 0 < different <= (1 if len(word) < 4 else 2) and different < len(word)


@cache
def _jieba():
    """jieba, its dictionary-loading chatter silenced once (``setLogLevel`` walks every
    logger under logging's global lock: not something to do on every question)."""
    import jieba

    jieba.setLogLevel(logging.WARNING)
    return jieba


def _tokens(text: str) -> list[tuple[int, int, str]]:
    """jieba's dictionary segmentation (no guessing of new words): (start, end, token),
    in order and end to end."""
    out = []
    at = 0
    for token in _jieba().cut(text, HMM=False):
        out.append((at, at + len(token), token))
        at += len(token)
    return out


def _clean_cut(start: int, end: int, tokens: list[tuple[int, int, str]]) -> bool:
    """The run does not cut through a multi-character dictionary word."""
    # Tokens tile the text, so only the ones holding the run's first and last
    # character can stick out of it (found by bisection: a long question has many).
    for at in (start, end - 1):
        s, e, token = tokens[bisect_right(tokens, at, key=lambda t: t[0]) - 1]
        if (s < start or e > end) and len(token) > 1:
            return False
    return True


def _is_word(run: str) -> bool:
    import jieba

    jieba.dt.check_initialized()
    return bool(jieba.dt.FREQ.get(run))  # prefixes of words are stored with frequency 0
