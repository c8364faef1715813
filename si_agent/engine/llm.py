"""The model-backed engine: OpenAI-compatible function calling, per state.

Each call sends only the current state's tools (``tool_choice: auto``), a
system prompt describing the business and what is awaited, the last 6 turns
and the message, all redacted (``privacy.Redactor``). The model's answer is
never trusted: unknown tools and malformed arguments are dropped, placeholders
are mapped back, and the controller validates everything else. Timeouts, 429
and 5xx get one retry with backoff; then the turn falls back to the rule
engine with the session intact.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from pydantic import BaseModel, ValidationError

from si_agent.config.model import Business, FieldDef
from si_agent.config.settings import Settings
from si_agent.engine.base import Decision, SessionView, TextSink, ToolCall, Usage
from si_agent.engine.prompts import extraction_prompt, grounded_prompt, system_prompt
from si_agent.engine.rules import RuleEngine
from si_agent.flow import tools as T
from si_agent.privacy import Redactor
from si_agent.validators import check

log = logging.getLogger(__name__)

HISTORY_MESSAGES = 12  # the last 6 turns
BACKOFF_SECONDS = 0.5


class ModelUnavailable(Exception):
    """The model could not be reached (after the retry) or refused the request."""

    def __init__(self, message: str, usage: Usage | None = None) -> None:
        super().__init__(message)
        self.usage = usage or Usage()


class _Extracted(BaseModel):
    """A per-field extraction call's arguments."""

    value: str | int | float | None = None


class _Arguments(BaseModel):
    """A tool call's arguments: a JSON object."""

    model_config = {"extra": "allow"}


class LLMEngine:
    """Decides with a model; falls back to ``fallback`` when the model is down."""

    name = "llm"

    def __init__(
        self,
        catalog: Mapping[str, Business],
        settings: Settings,
        *,
        fallback: RuleEngine | None = None,
        client: Any = None,
    ) -> None:
        self.catalog = dict(catalog)
        self.settings = settings
        self.fallback = fallback or RuleEngine(catalog)
        self._client = client

    @property
    def client(self):
        if self._client is None:
            try:
                from openai import OpenAI
            except ImportError as exc:  # pragma: no cover - depends on the install
                raise ImportError("the model engine needs the openai package: "
                                  "pip install 'si_agent[llm]'") from exc
            self._client = OpenAI(
                base_url=self.settings.llm_base_url,
                api_key=self.settings.llm_api_key or "not-needed",
                timeout=self.settings.llm_timeout,
                max_retries=0,  # one retry of our own, with backoff
            )
        return self._client

    # -- deciding -----------------------------------------------------------

    def decide(
        self, view: SessionView, message: str, tools: list[dict], on_text: TextSink | None = None
    ) -> Decision:
        redactor = Redactor()
        usage = Usage()
        offered = sorted(T.tool_names(tools))
        per_field = self._per_field(view)
        try:
            if per_field:
                decision, usage = self._extract_fields(view, message, redactor)
                if decision.calls:
                    return decision.model_copy(update={"offered": offered})
            reply, spent = self.complete(
                self._messages(view, message, redactor), tools, on_text, redactor)
            usage = usage + spent
        except ModelUnavailable as exc:
            rules = self.fallback.decide(view, message, tools)
            log.warning("model unavailable (%s); the rule engine decides this turn", exc)
            return rules.model_copy(update={
                "engine": f"{self.name}->rules", "usage": usage + exc.usage, "offered": offered,
                "reason": f"model unavailable: {exc}; rules: {rules.reason}",
            })
        calls, problems = self._parse(reply.get("tool_calls") or [], tools, redactor, view)
        calls += self._values_after_match(calls, view, message)
        text = reply.get("content") or None
        if text:
            text = redactor.restore_masked(text)
        if not calls and text:
            calls = [ToolCall(name=T.ANSWER_QUESTION, arguments={"question": message})]
        reason = "; ".join(problems) or ("tool calls" if reply.get("tool_calls") else "free text")
        return Decision(calls=calls, reason=reason, engine=self.name, text=text, usage=usage,
                        offered=offered)

    def _messages(self, view: SessionView, message: str, redactor: Redactor) -> list[dict]:
        turns = [{"role": m.role, "content": redactor.redact(m.text)}
                 for m in view.history[-HISTORY_MESSAGES:]]
        turns.append({"role": "user", "content": redactor.redact(message)})
        # Redacted last, so placeholders are numbered by the conversation's order.
        system = redactor.redact(system_prompt(view, self.catalog))
        return [{"role": "system", "content": system}, *turns]

    # -- calling the model --------------------------------------------------

    def complete(
        self, messages: list[dict], tools: list[dict], on_text: TextSink | None,
        redactor: Redactor,
    ) -> tuple[dict, Usage]:
        """One chat completion (one retry on timeouts, 429 and 5xx)."""
        import openai

        usage = Usage()
        for attempt in range(2):
            usage.model_calls += 1
            try:
                kwargs = dict(model=self.settings.llm_model, messages=messages,
                              temperature=self.settings.llm_temperature)
                if tools:
                    kwargs.update(tools=tools, tool_choice="auto")
                if on_text is not None:
                    reply, tokens = self._stream(kwargs, on_text, redactor)
                else:
                    reply, tokens = self._once(kwargs)
                usage.prompt_tokens += tokens[0]
                usage.completion_tokens += tokens[1]
                return reply, usage
            except (openai.APITimeoutError, openai.APIConnectionError, openai.RateLimitError,
                    openai.InternalServerError) as exc:
                problem = f"{type(exc).__name__}"
                if attempt == 0:
                    time.sleep(BACKOFF_SECONDS)
                    continue
                raise ModelUnavailable(f"{problem} after one retry", usage) from exc
            except openai.APIStatusError as exc:
                raise ModelUnavailable(f"HTTP {exc.status_code}", usage) from exc
            except openai.APIError as exc:
                raise ModelUnavailable(type(exc).__name__, usage) from exc
        raise ModelUnavailable("unreachable")  # pragma: no cover

    def _once(self, kwargs: dict) -> tuple[dict, tuple[int, int]]:
        response = self.client.chat.completions.create(**kwargs)
        choice = response.choices[0].message
        calls = [
            {"name": c.function.name, "arguments": c.function.arguments or ""}
            for c in (choice.tool_calls or []) if getattr(c, "function", None)
        ]
        u = response.usage
        tokens = (u.prompt_tokens, u.completion_tokens) if u else (0, 0)
        return {"content": choice.content, "tool_calls": calls}, tokens

    def _stream(self, kwargs: dict, on_text: TextSink, redactor: Redactor):
        stream = self.client.chat.completions.create(
            **kwargs, stream=True, stream_options={"include_usage": True})
        content: list[str] = []
        calls: dict[int, dict] = {}
        tokens = (0, 0)
        held = ""  # text after an unclosed "<": a placeholder may be split across deltas
        for chunk in stream:
            if chunk.usage:
                tokens = (chunk.usage.prompt_tokens, chunk.usage.completion_tokens)
            if not chunk.choices:
                continue
            delta = chunk.choices[0].delta
            if delta.content:
                content.append(delta.content)
                held += delta.content
                cut = held.rfind("<")
                if cut == -1 or ">" in held[cut:]:
                    cut = len(held)
                if cut:
                    on_text(redactor.restore_masked(held[:cut]))
                    held = held[cut:]
            for tc in delta.tool_calls or []:
                slot = calls.setdefault(tc.index, {"name": "", "arguments": ""})
                if tc.function and tc.function.name:
                    slot["name"] += tc.function.name
                if tc.function and tc.function.arguments:
                    slot["arguments"] += tc.function.arguments
        if held:
            on_text(redactor.restore_masked(held))
        return {"content": "".join(content) or None,
                "tool_calls": [calls[i] for i in sorted(calls)]}, tokens

    # -- reading the model's calls ------------------------------------------

    def _parse(
        self, raw_calls: list[dict], tools: list[dict], redactor: Redactor, view: SessionView
    ) -> tuple[list[ToolCall], list[str]]:
        offered = T.tool_names(tools)
        calls: list[ToolCall] = []
        problems: list[str] = []
        for raw in raw_calls:
            name = raw.get("name") or ""
            if name not in offered:
                problems.append(f"dropped {name!r}: not offered")
                continue
            try:
                args = _Arguments.model_validate_json(raw.get("arguments") or "{}").model_dump()
            except ValidationError:
                problems.append(f"dropped {name}: malformed arguments")
                continue
            args = redactor.restore(args)
            repaired = self._repair(name, args, view)
            if repaired is None:
                problems.append(f"dropped {name}: arguments do not fit")
                continue
            calls.append(ToolCall(name=name, arguments=repaired))
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
        business = self.catalog[started[-1].arguments["business_id"]]
        return [c for c in self.fallback.start(view, business, message)
                if c.name == T.PROVIDE_FIELD]

    def _repair(self, name: str, args: dict, view: SessionView) -> dict | None:
        """Fix the usual slips (a name for an id, values not wrapped); None if hopeless."""
        if name == T.MATCH_BUSINESS:
            bid = args.get("business_id")
            if not isinstance(bid, str):
                return None
            if bid not in self.catalog:
                by_name = {b.name: b.id for b in self.catalog.values()}
                if bid not in by_name:
                    return None
                args = {"business_id": by_name[bid]}
        if name == T.PROVIDE_FIELD and view.business is not None:
            values = args.get("values")
            if not isinstance(values, dict):
                values = {k: v for k, v in args.items() if k in view.business.field_keys}
            values = {k: v for k, v in values.items()
                      if k in view.business.field_keys and isinstance(v, (str, int, float))
                      and v != ""}
            if not values:
                return None
            args = {"values": {k: str(v) for k, v in values.items()}}
        if name == T.ANSWER_QUESTION:
            suggested = args.get("suggested_business_id")
            if not isinstance(suggested, str) or suggested not in self.catalog:
                args["suggested_business_id"] = None
            if not isinstance(args.get("question", ""), str):
                args["question"] = ""
        if name == T.MODIFY_INFO:
            if not isinstance(args.get("field_key"), str):
                return None
            if not isinstance(args.get("value"), (str, int, float, type(None))):
                args["value"] = None
        return args

    # -- per-field extraction (optional) --------------------------------------

    def _per_field(self, view: SessionView) -> bool:
        if view.state != "collecting" or view.business is None:
            return False
        mode = view.business.extraction or self.settings.llm_extraction
        return mode == "per_field"

    def _extract_fields(
        self, view: SessionView, message: str, redactor: Redactor
    ) -> tuple[Decision, Usage]:
        """One small call per pending field, in parallel; each validated on its own."""
        business = view.business
        assert business is not None
        text = redactor.redact(message)
        pending = [business.field(k) for k in view.pending_keys()]
        with ThreadPoolExecutor(max_workers=min(8, len(pending) or 1)) as pool:
            results = list(pool.map(lambda f: self._extract_one(f, text, redactor), pending))
        usage = Usage()
        values: dict[str, str] = {}
        problems: list[str] = []
        for field, (value, spent, problem) in zip(pending, results, strict=True):
            usage = usage + spent
            if problem:
                problems.append(f"{field.key}: {problem}")
            elif value is not None:
                values[field.key] = value
        calls = [ToolCall(name=T.PROVIDE_FIELD, arguments={"values": values})] if values else []
        return Decision(calls=calls, engine=f"{self.name}:per_field", usage=usage,
                        reason="; ".join(problems) or "per-field extraction"), usage

    def _extract_one(self, field: FieldDef, text: str, redactor: Redactor):
        tool = {
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
        messages = [
            {"role": "system", "content": extraction_prompt(field.label)},
            {"role": "user", "content": text},
        ]
        try:
            reply, usage = self.complete(messages, [tool], None, redactor)
        except ModelUnavailable as exc:
            return None, exc.usage, str(exc)
        for call in reply.get("tool_calls") or []:
            try:
                value = _Extracted.model_validate_json(call.get("arguments") or "{}").value
            except ValidationError:
                return None, usage, "malformed arguments"
            if value in (None, ""):
                return None, usage, None
            value = redactor.restore(str(value))
            if not check(field.type, value, **field.validator_options()).ok:
                return None, usage, "value does not validate"
            return value, usage, None
        return None, usage, None


class GroundedAnswerer:
    """Writes a knowledge answer from retrieved passages with the model (RAG's generator).

    The question is redacted like every other text sent; on any model failure
    the knowledge base falls back to its extractive answer.
    """

    def __init__(self, settings: Settings, client: Any = None) -> None:
        self._engine = LLMEngine({}, settings, fallback=RuleEngine({}), client=client)

    def __call__(self, question: str, passages) -> str:
        redactor = Redactor()
        messages = [
            {"role": "system", "content": grounded_prompt(passages)},
            {"role": "user", "content": redactor.redact(question)},
        ]
        reply, _ = self._engine.complete(messages, [], None, redactor)
        return redactor.restore_masked(reply.get("content") or "")


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
