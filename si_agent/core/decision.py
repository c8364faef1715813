"""The intent engine interface: from a message and a toolset to tool calls.

An engine sees a read-only ``SessionView`` and the OpenAI Function-Calling
tools the current state offers, and returns a ``Decision``. It never mutates
the session; the controller validates and applies each call.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, Field

from si_agent.config.model import Business, FieldDef, Step
from si_agent.core.state import SETTLED
from si_agent.session.model import FieldState, Message, Usage


class ToolCall(BaseModel):
    """One function call, as a model would return it."""

    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)


class Rule(str, Enum):
    """Which rule (or the model) produced a decision."""

    NONE = "none"                        # nothing recognised
    MODEL = "model"                      # a model chose the calls
    CANCEL_WORD = "cancel_word"
    SKIP_WORD = "skip_word"
    CONFIRM_WORD = "confirm_word"
    RETRY_WORD = "retry_word"
    ACCEPTED_SUGGESTION = "accepted_suggestion"
    RESUME = "resume"                    # a kept business taken up again ("继续")
    CONVERSATIONAL = "conversational"    # a reply with nothing to act on
    EXACT_KEYWORD = "exact_keyword"      # a business keyword, verbatim
    SIMILAR_KEYWORD = "similar_keyword"  # a business by keyword similarity
    AGAIN = "again"                      # the business just done, once more
    SUGGEST = "suggest"                  # a guess offered as a suggestion
    QUESTION = "question"
    VALUES = "values"                    # field values found by the extractors
    AWAITED_ANSWER = "awaited_answer"    # the whole message for the awaited field
    MODIFY = "modify"
    UPLOAD = "upload"
    SMALL_TALK = "small_talk"            # greeting, closing, hand-off, who-are-you
    SWITCH = "switch"                    # another business named mid-flow
    DECLINED = "declined"                # no to an offer (switching business)
    REFUSAL = "refusal"                  # declines to give the awaited field
    FIELD_HELP = "field_help"            # asks what a field's term means
    READ_BACK = "read_back"              # yes or no to long numbers heard and read back
    STAFF = "staff"                      # a value a staff member set in a hand-off


SURE = 1.0  # a decision this confident needs no model


class Decision(BaseModel):
    """What the engine decided for one message; empty ``calls`` = not understood.

    ``rule`` says what fired and ``confidence`` (0–1) how sure it is: ``SURE``
    marks rule decisions a model could not improve (an exact keyword, a value
    that validates for the awaited field, a confirm or cancel word). ``reason``
    is a log line for people, never parsed. ``text`` is a model's free-text
    answer (a reply without a tool call).
    """

    calls: list[ToolCall] = Field(default_factory=list)
    rule: Rule = Rule.NONE
    confidence: float = Field(default=0.0, ge=0.0, le=1.0)
    reason: str = ""
    engine: str = ""
    text: str | None = None
    usage: Usage = Field(default_factory=Usage)
    offered: list[str] = Field(default_factory=list)

    @property
    def confident(self) -> bool:
        return self.confidence >= SURE


@dataclass(frozen=True)
class SessionView:
    """A snapshot of the session for an engine; changing it changes nothing."""

    state: str
    business: Business | None
    fields: Mapping[str, FieldState]
    awaiting: str | None
    suggestion: str | None
    step: Step | None
    history: tuple[Message, ...]
    result: Mapping[str, Any] | None = None
    catalog: Mapping[str, Business] = field(repr=False, default_factory=dict)
    suspended: tuple[str, ...] = ()  # businesses put aside, newest last
    start_over_asked: bool = False  # the last reply asked whether to start over
    # The field each of them was waiting for: a value said with "继续" answers it.
    suspended_awaiting: Mapping[str, str | None] = field(default_factory=dict)

    def pending_keys(self) -> list[str]:
        """Field keys not yet collected, in business order."""
        if self.business is None:
            return []
        return [f.key for f in pending_fields(self.business, self.fields)]


def pending_fields(business: Business, fields: Mapping[str, FieldState]) -> list[FieldDef]:
    """The required fields of ``business`` not yet collected (nor skipped, in a
    consultation), in order."""
    return [
        f for f in business.fields
        if f.required and fields.get(f.key, FieldState()).status not in SETTLED
    ]


TextSink = Callable[[str], None]


class IntentEngine(Protocol):
    """Decides which tools to call for a message.

    ``on_text``, when given, receives pieces of a model's free-text answer as
    they are generated (for streaming); engines without a model ignore it.
    """

    name: str

    def decide(
        self, view: SessionView, message: str, tools: list[dict], on_text: TextSink | None = None
    ) -> Decision: ...


@runtime_checkable
class ValuesWithRequest(Protocol):
    """An engine that reads the values stated with the request starting ``business``
    ("从杭州转到苏州"): the calls that start it, with a ``provide_field`` for them.

    The flow asks it after the business's fields were first read from its web
    form (``fields: discover``), in the turn that started it.
    """

    def start(self, view: SessionView, business: Business, text: str) -> list[ToolCall]: ...
