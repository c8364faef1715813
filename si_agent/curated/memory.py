"""``MemoryCuratedStore``: curated answers in this process only (tests, ``si-agent chat``)."""

from __future__ import annotations

import threading
from collections.abc import Sequence

from si_agent.curated.model import CuratedAnswer


class MemoryCuratedStore:
    def __init__(self) -> None:
        self._records: dict[str, str] = {}
        self._hits: dict[str, int] = {}
        self._history: dict[str, list[str]] = {}
        self._revision = 0
        self._lock = threading.Lock()

    def all(self) -> list[CuratedAnswer]:
        with self._lock:
            return [self._load(i, r) for i, r in self._records.items()]

    def get(self, answer_id: str) -> CuratedAnswer | None:
        with self._lock:
            record = self._records.get(answer_id)
            return self._load(answer_id, record) if record is not None else None

    def write(self, answers: Sequence[CuratedAnswer],
              replaced: Sequence[CuratedAnswer] = ()) -> None:
        with self._lock:
            for old in replaced:
                self._history.setdefault(old.id, []).insert(0, old.record())
            for a in answers:
                self._records[a.id] = a.record()
            self._revision += 1

    def delete(self, answer_id: str) -> bool:
        with self._lock:
            found = self._records.pop(answer_id, None) is not None
            self._hits.pop(answer_id, None)
            self._history.pop(answer_id, None)
            self._revision += 1
            return found

    def count_hit(self, answer_id: str) -> None:
        with self._lock:
            if answer_id in self._records:
                self._hits[answer_id] = self._hits.get(answer_id, 0) + 1

    def revision(self) -> int:
        return self._revision

    def history(self, answer_id: str) -> list[CuratedAnswer]:
        with self._lock:
            return [CuratedAnswer.model_validate_json(r) for r in self._history.get(answer_id, [])]

    def _load(self, answer_id: str, record: str) -> CuratedAnswer:
        answer = CuratedAnswer.model_validate_json(record)
        answer.hits = self._hits.get(answer_id, 0)
        return answer
