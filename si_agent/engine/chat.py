"""One chat completion against an OpenAI-compatible endpoint, through the openai SDK.

``ChatModel`` owns the SDK client. Retries are the SDK's own
(``settings.llm_max_retries``): 408, 409, 429 and 5xx are retried honouring
``Retry-After``/``retry-after-ms``, and so are timeouts and connection errors;
``settings.llm_timeout`` bounds each request. When the last attempt fails, or
the endpoint refuses the request, ``ModelUnavailable`` is raised and carries
what was spent. So it is for a reply that is not a chat completion: a body that
is not JSON (an HTML error page), JSON without ``choices[0].message`` (read
through the small lenient models below, not the SDK's unvalidated objects), a
stream with a broken event or cut off mid-way. Such a reply is not retried.

``Usage.model_calls`` counts the HTTP requests actually sent, retries
included: the SDK is given its own httpx client whose request hook counts
into a per-call counter (a context variable, so parallel calls on one client
count apart).

The reply is returned as the model wrote it (``Reply``); reading its tool
calls (JSON arguments, placeholders) is the caller's job.
"""

from __future__ import annotations

import logging
from contextvars import ContextVar
from typing import Any

import httpx
from pydantic import BaseModel, Field

from si_agent.config.settings import Settings
from si_agent.core.decision import TextSink
from si_agent.errors import ModelUnavailable
from si_agent.session.model import Usage

log = logging.getLogger(__name__)

# The counter of the ``complete`` call running in this context (None outside one).
_sent: ContextVar[list[int] | None] = ContextVar("si_agent_model_requests", default=None)


class RawCall(BaseModel):
    """One tool call as the model wrote it: ``arguments`` is unparsed JSON text."""

    name: str = ""
    arguments: str = ""


class Reply(BaseModel):
    """A chat completion: free text, tool calls, and what it cost."""

    content: str | None = None
    tool_calls: list[RawCall] = Field(default_factory=list)
    usage: Usage = Field(default_factory=Usage)


class _Function(BaseModel):
    name: str | None = None
    arguments: str | None = None


class _ToolCall(BaseModel):
    function: _Function | None = None


class _Message(BaseModel):
    content: str | None = None
    tool_calls: list[_ToolCall] | None = None


class _Choice(BaseModel):
    message: _Message


class _Tokens(BaseModel):
    prompt_tokens: int | None = None
    completion_tokens: int | None = None


class _Completion(BaseModel):
    """What is read of a (non-streamed) chat completion; the rest of the body is ignored."""

    choices: list[_Choice] = Field(min_length=1)
    usage: _Tokens | None = None


def _count_request(request: Any) -> None:
    """httpx request hook: one more request sent for the running ``complete`` call."""
    counter = _sent.get()
    if counter is not None:
        counter[0] += 1


class ChatModel:
    """An OpenAI-compatible chat model, configured by ``Settings``.

    ``complete(messages, tools, on_text=...)`` sends one chat completion (the
    SDK may send it several times) and returns a ``Reply``; with ``on_text`` the
    answer is streamed and each piece of text is passed on as it arrives.
    """

    def __init__(self, settings: Settings) -> None:
        try:
            import openai
        except ImportError as exc:  # pragma: no cover - depends on the install
            raise ImportError("the model engine needs the openai package: "
                              "pip install 'si_agent[llm]'") from exc
        self.settings = settings
        self._openai = openai
        self.client = openai.OpenAI(
            base_url=settings.llm_base_url,
            api_key=settings.llm_api_key or "not-needed",
            timeout=settings.llm_timeout,
            max_retries=settings.llm_max_retries,
            http_client=openai.DefaultHttpxClient(event_hooks={"request": [_count_request]}),
        )

    def complete(
        self, messages: list[dict], tools: list[dict] | None = None, *,
        on_text: TextSink | None = None, tool_choice: str | dict | None = None,
    ) -> Reply:
        """One chat completion; ``tools`` are offered with ``tool_choice`` (``auto``
        unless given, e.g. ``{"type": "function", "function": {"name": ...}}``).

        Raises ``ModelUnavailable`` (with the usage spent) when the model
        cannot answer.
        """
        openai = self._openai
        counter = [0]
        token = _sent.set(counter)
        try:
            kwargs: dict[str, Any] = dict(model=self.settings.llm_model, messages=messages,
                                          temperature=self.settings.llm_temperature)
            if tools:
                kwargs.update(tools=tools, tool_choice=tool_choice or "auto")
            reply = self._stream(kwargs, on_text) if on_text is not None else self._once(kwargs)
        except openai.APIStatusError as exc:
            raise ModelUnavailable(f"HTTP {exc.status_code} after {counter[0]} request(s)",
                                   Usage(model_calls=counter[0])) from exc
        except openai.APIError as exc:
            raise ModelUnavailable(f"{type(exc).__name__} after {counter[0]} request(s)",
                                   Usage(model_calls=counter[0])) from exc
        except (ValueError, httpx.TransportError) as exc:
            # ValueError: broken JSON (JSONDecodeError) or a body that does not
            # validate (ValidationError); TransportError: a stream cut off mid-way.
            raise ModelUnavailable(f"unreadable reply ({type(exc).__name__}) after "
                                   f"{counter[0]} request(s)",
                                   Usage(model_calls=counter[0])) from exc
        finally:
            _sent.reset(token)
        reply.usage.model_calls = counter[0]
        return reply

    def _once(self, kwargs: dict) -> Reply:
        raw = self.client.chat.completions.with_raw_response.create(**kwargs)
        response = _Completion.model_validate(raw.http_response.json())
        message = response.choices[0].message
        calls = [RawCall(name=c.function.name or "", arguments=c.function.arguments or "")
                 for c in (message.tool_calls or []) if c.function is not None]
        return Reply(content=message.content, tool_calls=calls, usage=_tokens(response.usage))

    def _stream(self, kwargs: dict, on_text: TextSink) -> Reply:
        stream = self.client.chat.completions.create(
            **kwargs, stream=True, stream_options={"include_usage": True})
        content: list[str] = []
        calls: dict[int, RawCall] = {}
        usage = Usage()
        for chunk in stream:
            if chunk.usage:
                usage = _tokens(chunk.usage)
            if not chunk.choices:
                continue
            delta = chunk.choices[0].delta
            if delta.content:
                content.append(delta.content)
                on_text(delta.content)
            for tc in delta.tool_calls or []:
                slot = calls.setdefault(tc.index, RawCall())
                if tc.function and tc.function.name:
                    slot.name += tc.function.name
                if tc.function and tc.function.arguments:
                    slot.arguments += tc.function.arguments
        return Reply(content="".join(content) or None,
                     tool_calls=[calls[i] for i in sorted(calls)], usage=usage)


def _tokens(usage: Any) -> Usage:
    if usage is None:
        return Usage()
    return Usage(prompt_tokens=usage.prompt_tokens or 0,
                 completion_tokens=usage.completion_tokens or 0)
