"""The model-backed engine: OpenAI-compatible function calling, per state.

Each call sends only the current state's tools (``tool_choice: auto``), a
system prompt describing the business and what is awaited, the last 6 turns
and the message, all redacted (``privacy.Redactor``), through ``ChatModel``
(``chat.py``: the SDK's retries, every request counted). The model's answer is
never trusted: each call's arguments are parsed, repaired for the slips models
are known to make and validated against the offered tool's JSON Schema
(``arguments.py``); calls to tools not offered and calls that still do not fit
are dropped, with the reason recorded in the decision. Placeholders are mapped
back only then, and the controller validates the values. When the model stays
unavailable after the SDK's retries, answers with something that is not a chat
completion, or answers with neither text nor a call, the turn falls back to the
rule engine with the session intact. Calls that were all dropped are an answer
all the same: nothing is applied and the turn asks again.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any, NamedTuple

from si_agent.config.model import Business, FieldDef
from si_agent.config.settings import Settings
from si_agent.core import actions as T
from si_agent.core.catalog import Catalog
from si_agent.core.decision import Decision, Rule, SessionView, TextSink, ToolCall, Usage
from si_agent.core.state import State
from si_agent.engine.arguments import ArgumentsRejected, read_arguments
from si_agent.engine.chat import ChatModel, ModelUnavailable, RawCall
from si_agent.engine.prompts import extraction_prompt, grounded_prompt, system_prompt
from si_agent.engine.rules import RuleEngine
from si_agent.engine.rules.polarity import clean_calls
from si_agent.privacy import Redactor
from si_agent.validators import check

__all__ = ["GroundedAnswerer", "HybridEngine", "LLMEngine", "ModelUnavailable"]

log = logging.getLogger(__name__)

HISTORY_MESSAGES = 12  # the last 6 turns
NO_PARAMETERS: dict[str, Any] = {"type": "object", "properties": {}}


class LLMEngine:
    """Decides with a model; falls back to ``fallback`` when the model is down."""

    name = "llm"

    def __init__(
        self,
        catalog: Mapping[str, Business],
        settings: Settings,
        *,
        fallback: RuleEngine | None = None,
        chat: ChatModel | None = None,
    ) -> None:
        # The controller's catalog when it is a ``Catalog`` (read, never copied).
        self.catalog = catalog if isinstance(catalog, Catalog) else Catalog(catalog)
        self.settings = settings
        self.fallback = fallback or RuleEngine(self.catalog)
        self.chat = chat or ChatModel(settings)
        self._indexed: tuple[int, dict[str, str]] = (0, {})  # (catalog version, name -> id)

    @property
    def _business_ids(self) -> dict[str, str]:
        """Business names to ids, rebuilt when discovery changed the catalog."""
        version, ids = self._indexed
        if version != self.catalog.version:
            ids = {b.name: b.id for b in self.catalog.values()}
            self._indexed = (self.catalog.version, ids)
        return ids

    # -- deciding -----------------------------------------------------------

    def decide(
        self, view: SessionView, message: str, tools: list[dict], on_text: TextSink | None = None
    ) -> Decision:
        redactor = Redactor()
        usage = Usage()
        offered = sorted(T.tool_names(tools))
        problems: list[str] = []  # calls dropped, this turn
        try:
            if self._per_field(view):
                calls, usage, problems = self._extract_fields(view, message, redactor)
                calls = clean_calls(view.business, calls)  # never store "改回张伟"
                if calls:
                    return Decision(calls=calls, rule=Rule.MODEL, engine=f"{self.name}:per_field", usage=usage,
                                    offered=offered,
                                    reason="; ".join(problems) or "per-field extraction")
            sink = _MaskedText(on_text, redactor) if on_text is not None else None
            reply = self.chat.complete(self._messages(view, message, redactor), tools,
                                       on_text=sink)
            if sink is not None:
                sink.flush()
            usage = usage + reply.usage
        except ModelUnavailable as exc:
            log.warning("model unavailable (%s); the rule engine decides this turn", exc)
            return self._by_rules(view, message, tools, usage + exc.usage, offered,
                                  [*problems, f"model unavailable: {exc}"])
        calls, dropped = self._read_calls(reply.tool_calls, tools, redactor)
        problems += dropped
        text = redactor.restore_masked(reply.content) if reply.content else None
        if not calls and not text:
            # No text and no usable call: an empty answer, or only tool names that
            # exist in no state (made up): as good as none, so the rules decide, as
            # when the model is down. A tool of another state ("confirm_submit" while
            # collecting) or arguments that do not fit are different: the model read
            # the message and chose wrong, and the turn asks again.
            if not reply.tool_calls or not any(T.is_tool(c.name) for c in reply.tool_calls):
                why = "empty answer" if not reply.tool_calls else "only made-up tool names"
                log.warning("%s from the model; the rule engine decides this turn", why)
                return self._by_rules(view, message, tools, usage, offered, [*problems, why])
        calls += self._values_after_match(calls, view, message)
        calls = clean_calls(view.business, calls)  # never store "改回张伟", from a model either
        if not calls and text:
            calls = [ToolCall(name=T.ANSWER_QUESTION, arguments={"question": message})]
        reason = "; ".join(problems) or ("tool calls" if reply.tool_calls else "free text")
        return Decision(calls=calls, rule=Rule.MODEL, reason=reason, engine=self.name, text=text, usage=usage,
                        offered=offered)

    def start(self, view: SessionView, business: Business, message: str) -> list[ToolCall]:
        """The calls that start ``business`` with the values in ``message``: the rules'
        (``ValuesWithRequest``), as for a model's ``match_business``."""
        return self.fallback.start(view, business, message)

    def _by_rules(self, view: SessionView, message: str, tools: list[dict], usage: Usage,
                  offered: list[str], problems: list[str]) -> Decision:
        rules = self.fallback.decide(view, message, tools)
        return rules.model_copy(update={
            "engine": f"{self.name}->rules", "usage": usage, "offered": offered,
            "reason": "; ".join([*problems, f"rules: {rules.reason}"]),
        })

    def _messages(self, view: SessionView, message: str, redactor: Redactor) -> list[dict]:
        turns = [{"role": m.role, "content": redactor.redact(m.text)}
                 for m in view.history[-HISTORY_MESSAGES:]]
        turns.append({"role": "user", "content": redactor.redact(message)})
        # Redacted last, so placeholders are numbered by the conversation's order.
        system = redactor.redact(system_prompt(view, self.catalog))
        return [{"role": "system", "content": system}, *turns]

    # -- reading the model's calls ------------------------------------------

    def _read_calls(
        self, raw_calls: list[RawCall], tools: list[dict], redactor: Redactor
    ) -> tuple[list[ToolCall], list[str]]:
        """The calls that fit an offered tool's schema (placeholders restored), and why others not."""
        by_name = {t["function"]["name"]: t for t in tools}
        calls: list[ToolCall] = []
        problems: list[str] = []
        for raw in raw_calls:
            tool = by_name.get(raw.name)
            if tool is None:
                problems.append(f"dropped {raw.name!r}: not offered")
                continue
            schema = tool["function"].get("parameters") or NO_PARAMETERS
            try:
                args = read_arguments(raw.name, raw.arguments, schema, self._business_ids)
            except ArgumentsRejected as exc:
                problems.append(f"dropped {raw.name}: {exc.reason}")
                continue
            calls.append(ToolCall(name=raw.name, arguments=redactor.restore(args)))
        return calls, problems

    def _values_after_match(
        self, calls: list[ToolCall], view: SessionView, message: str
    ) -> list[ToolCall]:
        """Values stated with the request that starts a business ("从杭州转到苏州").

        In idle the model is offered only the idle tools, so the values in the
        same message (and a number just issued) are found by the rules, with
        no second model call.
        """
        started = [c for c in calls if c.name == T.MATCH_BUSINESS]
        if not started or any(c.name == T.PROVIDE_FIELD for c in calls):
            return []
        business = self.catalog.get(started[-1].arguments["business_id"])
        if business is None:
            return []
        return [c for c in self.start(view, business, message) if c.name == T.PROVIDE_FIELD]

    # -- per-field extraction (optional) --------------------------------------

    def _per_field(self, view: SessionView) -> bool:
        if view.state != State.COLLECTING or view.business is None or view.business.is_consult:
            return False  # a consultation: one call per turn, whatever the setting
        mode = view.business.extraction or self.settings.llm_extraction
        return mode == "per_field"

    def _extract_fields(
        self, view: SessionView, message: str, redactor: Redactor
    ) -> tuple[list[ToolCall], Usage, list[str]]:
        """One small call per pending field, in parallel; each validated on its own.

        Returns the ``provide_field`` call (if any value was found), the usage
        and what went wrong per field.
        """
        business = view.business
        assert business is not None
        text = redactor.redact(message)
        pending = [business.field(k) for k in view.pending_keys()]
        with ThreadPoolExecutor(max_workers=min(8, len(pending) or 1)) as pool:
            results = list(pool.map(lambda f: self._extract_one(f, text, redactor), pending))
        usage = Usage()
        values: dict[str, str] = {}
        problems: list[str] = []
        for field, result in zip(pending, results, strict=True):
            usage = usage + result.usage
            if result.problem:
                problems.append(result.problem)
            elif result.value is not None:
                values[field.key] = result.value
        calls = [ToolCall(name=T.PROVIDE_FIELD, arguments={"values": values})] if values else []
        return calls, usage, problems

    def _extract_one(self, field: FieldDef, text: str, redactor: Redactor) -> _Extraction:
        tool = extraction_tool(field)
        name = tool["function"]["name"]
        messages = [
            {"role": "system", "content": extraction_prompt(field.label)},
            {"role": "user", "content": text},
        ]
        try:
            reply = self.chat.complete(messages, [tool])
        except ModelUnavailable as exc:
            return _Extraction(None, exc.usage, f"{name}: model unavailable: {exc}")
        calls, problems = self._read_calls(reply.tool_calls, [tool], redactor)
        if not calls:
            return _Extraction(None, reply.usage, problems[0] if problems else None)
        value = calls[0].arguments.get("value")
        if value in (None, ""):
            return _Extraction(None, reply.usage, None)
        if not check(field.type, value, **field.validator_options()).ok:
            return _Extraction(None, reply.usage, f"{name}: value does not validate")
        return _Extraction(value, reply.usage, None)


class _Extraction(NamedTuple):
    """One per-field extraction: the value found (or None), its cost, and what went wrong."""

    value: str | None
    usage: Usage
    problem: str | None


def extraction_tool(field: FieldDef) -> dict:
    """The one tool of a per-field extraction call."""
    return {
        "type": "function",
        "function": {
            "name": f"extract_{field.key}",
            "description": f"The user's {field.label} ({field.type}) if the message states it.",
            "parameters": {
                "type": "object",
                "properties": {"value": {"type": ["string", "null"]}},
                "required": ["value"], "additionalProperties": False,
            },
        },
    }


class _MaskedText:
    """Passes streamed model text on with placeholders masked.

    Text from an unclosed "<" on is held back: a placeholder may be split
    across deltas. ``flush`` passes on what is left at the end.
    """

    def __init__(self, sink: TextSink, redactor: Redactor) -> None:
        self.sink = sink
        self.redactor = redactor
        self.held = ""

    def __call__(self, piece: str) -> None:
        self.held += piece
        cut = self.held.rfind("<")
        if cut == -1 or ">" in self.held[cut:]:
            cut = len(self.held)
        if cut:
            self.sink(self.redactor.restore_masked(self.held[:cut]))
            self.held = self.held[cut:]

    def flush(self) -> None:
        if self.held:
            self.sink(self.redactor.restore_masked(self.held))
            self.held = ""


class GroundedAnswerer:
    """Writes a knowledge answer from retrieved passages with the model (RAG's generator).

    The question is redacted like every other text sent; on any model failure
    (``ModelUnavailable``) the knowledge base falls back to its extractive answer.
    The model cites the passages ([1], [2]) or says the knowledge base's
    ``NOT_FOUND`` sentence; an answer citing nothing is not used.
    """

    def __init__(self, settings: Settings, chat: ChatModel | None = None) -> None:
        from rag.texts import NOT_FOUND

        self.chat = chat or ChatModel(settings)
        self.not_found = NOT_FOUND

    def __call__(self, question: str, passages) -> str:
        redactor = Redactor()
        messages = [
            {"role": "system", "content": grounded_prompt(passages, self.not_found)},
            {"role": "user", "content": redactor.redact(question)},
        ]
        reply = self.chat.complete(messages)
        return redactor.restore_masked(reply.content or "")


class HybridEngine:
    """Rules first; the model only when the rules are not confident."""

    name = "hybrid"

    def __init__(self, rules: RuleEngine, model: LLMEngine) -> None:
        self.rules = rules
        self.model = model

    def decide(
        self, view: SessionView, message: str, tools: list[dict], on_text: TextSink | None = None
    ) -> Decision:
        decision = self.rules.decide(view, message, tools)
        if decision.confident:
            return decision.model_copy(update={"engine": "hybrid:rules"})
        chosen = self.model.decide(view, message, tools, on_text)
        return chosen.model_copy(update={"engine": f"hybrid:{chosen.engine}"})

    def start(self, view: SessionView, business: Business, message: str) -> list[ToolCall]:
        """``ValuesWithRequest``: the rules read them."""
        return self.rules.start(view, business, message)
