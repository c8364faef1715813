"""What a moderator says about a text: ``Verdict``, made of ``Hit`` s, and the Protocol.

Outcomes, strongest first: ``refuse`` (the text is not used: a polite fixed reply
instead), ``mask`` (the listed words are starred, the rest goes on), ``flag`` (the
text goes on unchanged and the conversation is marked for review), ``pass``.
A verdict may both mask and flag.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Literal, Protocol, runtime_checkable

Where = Literal["input", "output"]  # a citizen's message, or a reply about to be shown


class Action(str, Enum):
    PASS = "pass"
    MASK = "mask"
    REFUSE = "refuse"
    FLAG = "flag"


@dataclass(frozen=True)
class Hit:
    """One listed word found: where in the original text, its category and action."""

    start: int
    end: int  # exclusive, in the original text
    category: str
    action: Action
    word: str  # the list's word (never the citizen's text around it)


@dataclass(frozen=True)
class Verdict:
    text: str  # the text to use: masked where a hit masks
    hits: tuple[Hit, ...] = ()
    refused: bool = False
    masked: bool = False
    flagged: bool = False
    source: str = "words"  # which moderator decided (words, http, or both joined)
    reply: str | None = None  # for a refused message: the list's own reply, if it has one
    categories: tuple[str, ...] = field(default=())

    @property
    def action(self) -> Action:
        if self.refused:
            return Action.REFUSE
        if self.masked:
            return Action.MASK
        return Action.FLAG if self.flagged else Action.PASS

    @property
    def clean(self) -> bool:
        return self.action is Action.PASS


def passed(text: str, source: str = "words") -> Verdict:
    return Verdict(text=text, source=source)


@runtime_checkable
class Moderator(Protocol):
    """Checks one text; must not raise for any text (a moderator that cannot decide
    says so in its verdict or is wrapped by one that does)."""

    name: str

    def check(self, text: str, where: Where) -> Verdict: ...

    def hold(self, text: str, start: int) -> int:
        """For a streamed reply: the index of ``text`` up to which it may be sent (what no
        later text can change); ``start`` is what was sent already."""
        ...
