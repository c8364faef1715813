"""``CuratedBook``: the curated answers of a deployment, as staff edit them and citizens ask.

Edits are checked here, whoever makes them (the console, the CLI, an import): every
question and paraphrase belongs to one answer only (compared by their match keys, so
"请问失业金怎么领？" and "失业金怎么领" are the same question: ``DuplicateQuestion``),
and the businesses named exist. The matcher's index is rebuilt whenever the store's
revision changes. The revision is read at most once every ``REVISION_SECONDS`` (it is
one Redis round trip, and a turn without a knowledge base asks whether curated
answers exist): an edit made through this book is seen at once, one made on another
machine or process within that time.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from si_agent.curated.matching import Index, Match, Matcher
from si_agent.curated.model import CuratedAnswer, Draft
from si_agent.curated.store import CuratedStore

log = logging.getLogger(__name__)

REVISION_SECONDS = 1.0


class DuplicateQuestion(ValueError):
    """A question (or paraphrase) that another curated answer already has."""

    def __init__(self, question: str, other: CuratedAnswer) -> None:
        super().__init__(f"{question!r} is already a question of curated answer {other.id}")
        self.question = question
        self.other = other


class UnknownBusiness(ValueError):
    def __init__(self, business: str) -> None:
        super().__init__(f"unknown business {business!r}")
        self.business = business


@dataclass(frozen=True)
class Imported:
    """What an import does: the answers added, those revised (same question), and the
    drafts that cannot be imported (their index among the drafts, and why)."""

    added: list[CuratedAnswer]
    updated: list[CuratedAnswer]
    errors: list[tuple[int, ValueError]]


class CuratedBook:
    """The store plus the matcher; ``businesses`` are the catalog's ids."""

    def __init__(self, store: CuratedStore, matcher: Matcher | None = None,
                 businesses: Collection[str] = ()) -> None:
        self.store = store
        self.matcher = matcher or Matcher()
        self.businesses = frozenset(businesses)
        self._index: Index | None = None
        self._revision: int | None = None
        self._checked = float("-inf")  # when the store's revision was last read
        self._lock = threading.Lock()

    # -- what citizens' questions use --------------------------------------------

    def match(self, question: str) -> Match | None:
        """The enabled curated answer ``question`` asks for, or None (raises
        ``StoreUnavailable``)."""
        return self.matcher.match(question, self._current())

    def empty(self) -> bool:
        """Whether no enabled curated answer exists (raises ``StoreUnavailable``)."""
        return not self._current().entries

    def count_hit(self, answer: CuratedAnswer) -> None:
        self.store.count_hit(answer.id)

    def _current(self) -> Index:
        now = time.monotonic()
        if self._index is not None and now - self._checked < REVISION_SECONDS:
            return self._index
        revision = self.store.revision()
        with self._lock:
            if self._index is None or revision != self._revision:
                self._index = self.matcher.index(self.store.all())
                self._revision = revision
            self._checked = now
            return self._index

    def _changed(self) -> None:
        """After a write through this book: the next question reads the store again."""
        self._checked = float("-inf")

    # -- what staff do ---------------------------------------------------------------

    def all(self) -> list[CuratedAnswer]:
        """Every curated answer, the most asked first."""
        return sorted(self.store.all(), key=lambda a: (-a.hits, -a.updated))

    def get(self, answer_id: str) -> CuratedAnswer | None:
        return self.store.get(answer_id)

    def add(self, draft: Draft, author: str) -> CuratedAnswer:
        """A new curated answer; ``DuplicateQuestion``, ``UnknownBusiness``."""
        self._check(draft, self.store.all(), None)
        answer = CuratedAnswer(**draft.model_dump(), author=author, updated_by=author)
        self.store.write([answer])
        self._changed()
        return answer

    def update(self, old: CuratedAnswer, draft: Draft, author: str) -> CuratedAnswer:
        """``old`` as ``draft`` says, one version on (the old one kept in its history)."""
        self._check(draft, self.store.all(), old.id)
        new = old.revised(draft, author)
        self.store.write([new], [old])
        self._changed()
        return new

    def set_enabled(self, old: CuratedAnswer, enabled: bool, author: str) -> CuratedAnswer:
        draft = Draft(**{**old.model_dump(include=set(Draft.model_fields)), "enabled": enabled})
        return self.update(old, draft, author)

    def delete(self, answer: CuratedAnswer) -> bool:
        found = self.store.delete(answer.id)
        self._changed()
        return found

    def plan_import(self, drafts: Sequence[Draft], author: str) -> Imported:
        """What importing ``drafts`` would do, checked, without doing it: a draft whose
        question is an existing answer's question revises that answer, any other is
        added. ``DuplicateQuestion`` when a draft's question is another answer's
        paraphrase (or another draft's), ``UnknownBusiness`` are listed in ``errors``."""
        existing = self.store.all()
        by_key = {self.matcher.key(a.question): a for a in existing}
        taken = self._taken(existing, None)
        added: list[CuratedAnswer] = []
        updated: dict[str, CuratedAnswer] = {}
        errors: list[tuple[int, ValueError]] = []
        for at, draft in enumerate(drafts):
            old = by_key.get(self.matcher.key(draft.question))
            # An answer staff disabled stays disabled when its row comes again.
            planned = (old.revised(draft.model_copy(update={"enabled": old.enabled}), author)
                       if old else CuratedAnswer(**draft.model_dump(), author=author,
                                                 updated_by=author))
            keys = [self.matcher.key(q) for q in planned.questions]
            try:
                self._check_businesses(draft)
                if old is not None and old.id in updated:
                    raise DuplicateQuestion(draft.question, updated[old.id])
                for q, k in zip(planned.questions, keys, strict=True):
                    other = taken.get(k)
                    if other is not None and other.id != planned.id:
                        raise DuplicateQuestion(q, other)
            except ValueError as exc:
                errors.append((at, exc))
                continue
            if old is not None:
                for q in old.questions:
                    taken.pop(self.matcher.key(q), None)
                updated[old.id] = planned
            else:
                added.append(planned)
            taken.update(dict.fromkeys(keys, planned))
        return Imported(added, list(updated.values()), errors)

    def run_import(self, plan: Imported) -> None:
        """Write a planned import without errors, all or nothing."""
        if plan.errors:
            raise ValueError("an import with errors is not written")
        replaced = [old for u in plan.updated if (old := self.store.get(u.id)) is not None]
        self.store.write([*plan.added, *plan.updated], replaced)
        self._changed()

    def _check(self, draft: Draft, answers: Sequence[CuratedAnswer], own: str | None) -> None:
        self._check_businesses(draft)
        taken = self._taken(answers, own)
        for q in [draft.question, *draft.paraphrases]:
            other = taken.get(self.matcher.key(q))
            if other is not None:
                raise DuplicateQuestion(q, other)

    def _check_businesses(self, draft: Draft) -> None:
        for b in draft.businesses:
            if b not in self.businesses:
                raise UnknownBusiness(b)

    def _taken(self, answers: Sequence[CuratedAnswer], own: str | None) -> dict[str, CuratedAnswer]:
        """Each key of the questions of ``answers`` (but answer ``own``) → its answer."""
        taken: dict[str, CuratedAnswer] = {}
        for a in answers:
            if a.id != own:
                for q in a.questions:
                    taken.setdefault(self.matcher.key(q), a)
        return taken
