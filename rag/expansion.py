"""Query expansion from the businesses' own words.

A citizen says "被公司辞退了能领什么补助吗"; the documents say "失业保险金". The
businesses already know such words: their keywords, the options and aliases
of their fields ("被辞退" is an option of the unemployment claim), their
distinctive field labels ("受理编号"), and the synonyms their help texts
give in brackets ("临时挂失（也叫口头挂失）"). ``BusinessTerms`` carries them,
built by the caller (si_agent builds them from the business catalog; ``rag``
never reads business files itself).

A phrase names a business only if no other business uses it. A question
naming one or two businesses this way gets their names appended ("失业保险金申领")
and each synonym its main word; the normalised question itself is unchanged.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

MIN_PHRASE = 2
MAX_BUSINESSES = 2  # a question naming more is too general to steer by names


@dataclass(frozen=True)
class BusinessTerms:
    """The words one business is known by: ``phrases`` (keywords, options, labels),
    ``aliases`` (other ways citizens say an option: "被辞退") and ``synonyms`` (a
    variant → its main word, from the help texts). Aliases name the business in
    expansion but are no targets of the typo check: many are everyday words."""

    business_id: str
    name: str
    phrases: tuple[str, ...] = ()
    synonyms: Mapping[str, str] = field(default_factory=dict)
    aliases: tuple[str, ...] = ()


@dataclass(frozen=True)
class Expansion:
    """What was added to a question, and which businesses its words name."""

    added: tuple[str, ...] = ()
    businesses: tuple[str, ...] = ()


class QueryExpander:
    """Adds business names and main words to questions that use the businesses' words."""

    def __init__(self, businesses: Iterable[BusinessTerms] = ()) -> None:
        self.businesses = {b.business_id: b for b in businesses}
        owners: dict[str, set[str]] = defaultdict(set)
        for b in self.businesses.values():
            for p in (b.name, *b.phrases, *b.aliases):
                if len(p) >= MIN_PHRASE:
                    owners[p.lower()].add(b.business_id)
        self._owner = {p: next(iter(ids)) for p, ids in owners.items() if len(ids) == 1}
        self._synonyms = {v.lower(): w for b in self.businesses.values()
                          for v, w in b.synonyms.items() if len(v) >= MIN_PHRASE}
        every = sorted({*self._owner, *self._synonyms}, key=len, reverse=True)
        self._pattern = re.compile("|".join(map(re.escape, every))) if every else None

    @property
    def vocabulary(self) -> tuple[str, ...]:
        """Every business name, phrase and synonym main word (for the typo check; not
        the aliases)."""
        words = [w for b in self.businesses.values() for w in (b.name, *b.phrases)]
        words += list(self._synonyms.values())
        return tuple(dict.fromkeys(words))

    def expand(self, text: str) -> Expansion:
        if self._pattern is None:
            return Expansion()
        low = text.lower()
        named: list[str] = []
        added: list[str] = []
        for m in self._pattern.finditer(low):
            phrase = m.group()
            if phrase in self._synonyms:
                added.append(self._synonyms[phrase])
            if phrase in self._owner:
                named.append(self._owner[phrase])
        named = list(dict.fromkeys(named))
        if len(named) <= MAX_BUSINESSES:
            added += [self.businesses[b].name for b in named]
        else:
            named = []
        added = [w for w in dict.fromkeys(added) if w.lower() not in low]
        return Expansion(added=tuple(added), businesses=tuple(named))
