"""Matching a message to a business: keywords, scattered keywords, bigram similarity.

A ``BusinessIndex`` is built from one version of the catalog: each business's
phrases (its name and keywords), their character bigrams weighted by IDF over
every business's vocabulary, and one regex for "names some business". The
engine rebuilds it when the catalog's version changes.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Mapping

from si_agent.config.model import Business
from si_agent.engine import lexicon as L

MATCH_THRESHOLD = 0.75
SUGGEST_THRESHOLD = 0.45
ASKED_THRESHOLD = 0.6  # enough for a business asked for outright ("我要…") with a clear margin
MARGIN = 0.15
SCATTERED_SCORE = 0.8  # every character of a keyword, close together, in any order
_SCATTER_SLACK = 6
_CODES = re.compile(r"[A-Za-z0-9]{6,}")


def _bigrams(text: str) -> set[str]:
    return {text[i:i + 2] for i in range(len(text) - 1)} if len(text) > 1 else {text}


def _scattered(phrase: str, text: str) -> bool:
    """All characters of ``phrase`` (3+) occur in ``text`` within a short window.

    Catches "把社保从杭州转到苏州" for the keyword "转社保".
    """
    if len(phrase) < 3:
        return False
    need = Counter(phrase)
    if any(text.count(ch) < n for ch, n in need.items()):
        return False
    limit = len(phrase) + _SCATTER_SLACK
    for i, ch in enumerate(text):
        if ch not in need:
            continue
        window = Counter(text[i:i + limit])
        if all(window[c] >= n for c, n in need.items()):
            return True
    return False


def _only_a_verb_more(text: str, span: tuple[int, int] | None,
                      other: tuple[int, int] | None) -> bool:
    """Whether the phrase found at ``span`` overlaps the one at ``other`` and what it
    has beyond it is only the request's verb ("办理", "申请": ``lexicon.INTENT``)."""
    if span is None or other is None or span[1] <= other[0] or other[1] <= span[0]:
        return False
    rest = text[span[0]:max(span[0], other[0])] + text[min(span[1], other[1]):span[1]]
    return rest in L.INTENT


def mask_codes(text: str) -> str:
    """Long numbers and codes replaced by one character, for keyword matching."""
    return _CODES.sub("#", text)


Match = tuple[str | None, float, tuple[int, int] | None, float]


class BusinessIndex:
    """What matching needs from one version of the catalog.

    ``businesses`` is the catalog itself (read, never copied); ``version`` the
    catalog version the index was built from.
    """

    def __init__(self, businesses: Mapping[str, Business], version: int = 0) -> None:
        self.businesses = businesses
        self.version = version
        self._phrases = {
            b.id: tuple(dict.fromkeys(p.lower() for p in (b.name, *b.keywords)))
            for b in businesses.values()
        }
        df: Counter[str] = Counter()
        for phrases in self._phrases.values():
            df.update(set().union(*(_bigrams(p) for p in phrases)))
        n = max(1, len(businesses))
        self._idf = {g: math.log(1 + n / c) for g, c in df.items()}
        self._chars = {p: frozenset(p) for phrases in self._phrases.values() for p in phrases}
        every = sorted(self._chars, key=len, reverse=True)
        self._any_phrase = (re.compile("|".join(map(re.escape, every))) if every
                            else re.compile("$^"))
        self._totals = {p: sum(self._idf[g] for g in _bigrams(p)) or 1.0 for p in self._chars}
        # bigram -> the phrases holding it: a message's bigrams score only those phrases
        self._postings: dict[str, list[str]] = {}
        for p in self._chars:
            for g in _bigrams(p):
                self._postings.setdefault(g, []).append(p)

    def without_keywords(self, business: Business, text: str) -> str:
        """``text`` with the business's own name and keywords blanked out (same length)."""
        low = text.lower()
        for phrase in sorted(self._phrases.get(business.id, ()), key=len, reverse=True):
            if not phrase:
                continue
            at = low.find(phrase)
            while at >= 0:  # searched on after the blank: a phrase of spaces ends too
                text = text[:at] + " " * len(phrase) + text[at + len(phrase):]
                low = text.lower()
                at = low.find(phrase, at + len(phrase))
        return text

    def names_a_business(self, text: str) -> bool:
        """Whether ``text`` holds some business's name or keyword verbatim."""
        return bool(self._any_phrase.search(mask_codes(text.lower())))

    def match(self, text: str) -> Match:
        """Best business for ``text``: (id, score, matched span, runner-up score)."""
        low = mask_codes(text.lower())
        shared, chars = self._shared(low), set(low)
        scores = {bid: self._best(phrases, low, shared, chars)
                  for bid, phrases in self._phrases.items()}
        ranked = sorted(scores.items(), key=lambda kv: kv[1][:2], reverse=True)
        if not ranked or ranked[0][1][0] <= 0:
            return None, 0.0, None, 0.0
        bid, (score, length, span) = ranked[0]
        runner_bid, runner = ranked[1] if len(ranked) > 1 else (None, (0.0, 0, None))
        runner_score = runner[0]
        if score == runner[0] == 1.0:
            if _only_a_verb_more(low, span, runner[2]) and runner_bid is not None:
                # "办理社保卡挂失": 社保卡挂失 (card_loss) over 办理社保卡 (card_apply),
                # whose only other word is the request's verb
                return runner_bid, 1.0, runner[2], 0.0
            if length > runner[1] or _only_a_verb_more(low, runner[2], span):
                runner_score = 0.0  # the longer keyword wins: "社保卡挂失" over "社保卡"
        return bid, score, span, runner_score

    def score(self, business_id: str, text: str) -> float:
        """How well ``text`` matches the one business ``business_id`` (as in ``match``)."""
        low = mask_codes(text.lower())
        return self._best(self._phrases[business_id], low, self._shared(low), set(low))[0]

    def _shared(self, low: str) -> dict[str, float]:
        """For each phrase sharing a bigram with ``low``: the IDF weight of those bigrams."""
        shared: dict[str, float] = {}
        for g in _bigrams(low):
            for p in self._postings.get(g, ()):
                shared[p] = shared.get(p, 0.0) + self._idf[g]
        return shared

    def _best(self, phrases: tuple[str, ...], low: str, shared: dict[str, float],
              chars: set[str]) -> tuple[float, int, tuple[int, int] | None]:
        """(score, length of the phrase found verbatim, its span) of the best phrase."""
        best: tuple[float, int, tuple[int, int] | None] = (0.0, 0, None)
        for p in phrases:
            cand: tuple[float, int, tuple[int, int] | None]
            at = low.find(p)
            if at >= 0:
                cand = (1.0, len(p), (at, at + len(p)))
            elif self._chars[p] <= chars and _scattered(p, low):
                cand = (SCATTERED_SCORE, len(p), None)
            elif p in shared:
                cand = (shared[p] / self._totals[p], 0, None)
            else:
                continue
            if cand[:2] > best[:2]:
                best = cand
        return best
