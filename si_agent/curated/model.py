"""``CuratedAnswer``: one staff-written answer, and ``Draft``: what staff give to make one."""

from __future__ import annotations

import re
import time
import uuid
from datetime import date, datetime

from pydantic import BaseModel, Field, field_validator

MAX_QUESTION = 200
MAX_ANSWER = 4000
MAX_PARAPHRASES = 50
MAX_SOURCE = 200

# "2025-06-01", "2025/6/1", "2025.6", "2025年6月1日", "2025年6月", "2025-06"
_DATE = re.compile(r"^\s*(\d{4})\s*[-/.年]\s*(\d{1,2})\s*(?:月\s*)?(?:[-/.]?\s*(\d{1,2})\s*日?)?\s*$")


def parse_as_of(raw: object) -> str:
    """An as-of date as ``YYYY-MM-DD`` or ``YYYY-MM``; ``ValueError`` when it is none."""
    if isinstance(raw, datetime):
        raw = raw.date()
    if isinstance(raw, date):
        return raw.isoformat()
    m = _DATE.match(str(raw or ""))
    if not m:
        raise ValueError("not a date")
    year, month, day = int(m.group(1)), int(m.group(2)), m.group(3)
    if day is None:
        date(year, month, 1)  # raises for month 13
        return f"{year:04d}-{month:02d}"
    return date(year, month, int(day)).isoformat()


class Draft(BaseModel):
    """What staff write (the console's form, a row of a spreadsheet)."""

    question: str = Field(min_length=1, max_length=MAX_QUESTION)
    paraphrases: list[str] = Field(default_factory=list, max_length=MAX_PARAPHRASES)
    answer: str = Field(min_length=1, max_length=MAX_ANSWER)
    source: str = Field(min_length=1, max_length=MAX_SOURCE)
    as_of: str
    businesses: list[str] = Field(default_factory=list)
    enabled: bool = True

    @field_validator("question", "answer", "source", mode="before")
    @classmethod
    def _strip(cls, v: object) -> object:
        return v.strip() if isinstance(v, str) else v

    @field_validator("paraphrases", mode="before")
    @classmethod
    def _paraphrases(cls, v: object) -> object:
        if isinstance(v, list):
            kept = [p.strip() for p in v if isinstance(p, str) and p.strip()]
            if any(len(p) > MAX_QUESTION for p in kept):
                raise ValueError(f"a paraphrase is longer than {MAX_QUESTION} characters")
            return list(dict.fromkeys(kept))
        return v

    @field_validator("as_of", mode="before")
    @classmethod
    def _as_of(cls, v: object) -> str:
        return parse_as_of(v)


class CuratedAnswer(Draft):
    """A curated answer as stored: a draft with who wrote it, when, and its version.

    ``hits`` is how many citizens' questions it answered (kept apart from the record
    by the stores, so counting a hit never rewrites it).
    """

    id: str = Field(default_factory=lambda: uuid.uuid4().hex[:12])
    author: str
    created: float = Field(default_factory=time.time)
    updated: float = Field(default_factory=time.time)
    updated_by: str = ""
    version: int = 1
    hits: int = 0

    @property
    def questions(self) -> list[str]:
        """The question and its paraphrases."""
        return [self.question, *self.paraphrases]

    def revised(self, draft: Draft, author: str) -> CuratedAnswer:
        """This answer as ``draft`` says, one version on."""
        return CuratedAnswer(**draft.model_dump(), id=self.id, author=self.author,
                             created=self.created, updated=time.time(), updated_by=author,
                             version=self.version + 1, hits=self.hits)

    def record(self) -> str:
        """The JSON the stores keep (without the hit count)."""
        return self.model_dump_json(exclude={"hits"})
