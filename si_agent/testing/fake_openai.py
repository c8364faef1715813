"""A fake OpenAI-compatible server: a real HTTP server for ``/v1/chat/completions``
and ``/v1/audio/transcriptions``.

Answers are scripted, one per request, in the order pushed::

    fake.push({"tool_calls": [{"name": "provide_field",
                               "arguments": {"values": {"from_city": "杭州"}}}]})
    fake.push({"content": "您好"})              # a free-text answer
    fake.push({"status": 500})                  # an error status
    fake.push({"status": 429, "headers": {"Retry-After": "0"}})  # with response headers
    fake.push({"delay": 2.0, "content": "…"})   # answers after a delay (timeouts)
    fake.push({"tool_calls": [{"name": "x", "arguments": "{not json"}]})  # raw arguments
    fake.push({"tool_calls": [{"arguments": {"value": "杭州"}}]})  # the first tool offered
    fake.push({"body": "{not json"})           # a raw body, sent as is (status 200)
    fake.push({"body": "<html>…</html>", "content_type": "text/html"})

A tool call without a ``name`` is answered with the first tool the request
offers (parallel per-field requests can then share one script). ``headers`` are
sent with any scripted response, an error or an answer. An entry is taken when
its request arrives, so a request the client gave up on (a timeout) still used
one; the SDK's retry gets the next.

A transcription request takes the next entry too: ``{"text": "我要办社保卡"}`` is
answered as ``{"text": ...}``, ``{"status": 500}`` as an error; its form fields (not the
audio: its size and type) are recorded in ``transcriptions``.

Streaming requests (``"stream": true``) get Server-Sent Events in the OpenAI
chunk format, content split into small deltas, tool calls as argument deltas,
and a final usage chunk. Every request body is recorded in ``requests``; a
request with nothing scripted gets HTTP 500 and is counted in ``unscripted``.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections import deque
from typing import Any

from flask import Flask, Response, jsonify, request
from werkzeug.serving import make_server

from si_agent.config.settings import Settings
from si_agent.engine.chat import ChatModel

DELTA_CHARS = 4


class FakeOpenAI:
    """Start with ``start()`` (returns the base URL), stop with ``stop()``."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.transcriptions: list[dict[str, Any]] = []
        self.unscripted = 0
        self._script: deque[dict[str, Any]] = deque()
        self._lock = threading.Lock()
        self._server = None
        self._thread: threading.Thread | None = None
        self.app = self._build()

    # -- control -----------------------------------------------------------------

    def push(self, *entries: dict[str, Any]) -> None:
        with self._lock:
            self._script.extend(entries)

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._script)

    def clear(self) -> None:
        with self._lock:
            self._script.clear()

    def start(self) -> str:
        self._server = make_server("127.0.0.1", 0, self.app, threaded=True)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return f"http://127.0.0.1:{self._server.server_port}/v1"

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server = None

    def __enter__(self) -> FakeOpenAI:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def chat_model(self, model: str = "test-model", **settings: Any) -> ChatModel:
        """A ``ChatModel`` talking to this (started) server; ``settings`` are more
        ``Settings`` fields, e.g. ``llm_max_retries=0``."""
        if self._server is None:
            raise RuntimeError("start the fake server first")
        url = f"http://127.0.0.1:{self._server.server_port}/v1"
        return ChatModel(Settings(llm_base_url=url, llm_api_key="test", llm_model=model,
                                  llm_temperature=0.0, **settings))

    # -- the HTTP side -------------------------------------------------------------

    def _take(self, log: list, seen: Any) -> dict[str, Any] | None:
        """Record ``seen`` in ``log`` and take the next scripted entry (after its delay);
        None (counted in ``unscripted``) when nothing is scripted."""
        with self._lock:
            log.append(seen)
            entry = self._script.popleft() if self._script else None
            if entry is None:
                self.unscripted += 1
        if entry is not None and entry.get("delay"):
            time.sleep(float(entry["delay"]))
        return entry

    def _build(self) -> Flask:
        app = Flask("fake_openai")

        @app.post("/v1/chat/completions")
        def completions():
            body = request.get_json(force=True)
            entry = self._take(self.requests, body)
            if entry is None:
                return _error(500, "no scripted response")
            headers = entry.get("headers") or {}
            if "body" in entry:
                kind = "text/event-stream" if body.get("stream") else "application/json"
                response = Response(entry["body"], status=int(entry.get("status") or 200),
                                    content_type=entry.get("content_type", kind))
            elif entry.get("status"):
                response = _error(int(entry["status"]), entry.get("message", "scripted error"))
            elif body.get("stream"):
                response = Response(_stream(body, entry), mimetype="text/event-stream")
            else:
                response = jsonify(_completion(body, entry))
            response.headers.update(headers)
            return response

        @app.post("/v1/audio/transcriptions")
        def transcriptions():
            audio = request.files.get("file")
            seen = {**request.form.to_dict(), "authorization": request.headers.get("Authorization"),
                    "file_bytes": len(audio.read()) if audio else 0,
                    "file_type": audio.mimetype if audio else None}
            entry = self._take(self.transcriptions, seen)
            if entry is None:
                return _error(500, "no scripted response")
            if entry.get("status"):
                return _error(int(entry["status"]), entry.get("message", "scripted error"))
            return jsonify(text=entry.get("text", ""))

        return app


def _error(status: int, message: str) -> Response:
    response = jsonify(error={"message": message, "type": "fake_error", "code": status})
    response.status_code = status
    return response


def _name(call: dict, body: dict) -> str:
    if call.get("name"):
        return call["name"]
    tools = body.get("tools") or []
    return tools[0]["function"]["name"] if tools else ""


def _arguments(call: dict) -> str:
    args = call.get("arguments", {})
    return args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)


def _usage(body: dict, entry: dict) -> dict:
    prompt = len(json.dumps(body.get("messages", []), ensure_ascii=False)) // 2
    completion = len(json.dumps(entry, ensure_ascii=False)) // 2
    return {"prompt_tokens": prompt, "completion_tokens": completion,
            "total_tokens": prompt + completion}


def _completion(body: dict, entry: dict) -> dict:
    calls = [
        {"id": f"call_{uuid.uuid4().hex[:8]}", "type": "function",
         "function": {"name": _name(c, body), "arguments": _arguments(c)}}
        for c in entry.get("tool_calls", [])
    ]
    message: dict[str, Any] = {"role": "assistant", "content": entry.get("content")}
    if calls:
        message["tool_calls"] = calls
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex[:12]}", "object": "chat.completion",
        "created": int(time.time()), "model": body.get("model", "fake"),
        "choices": [{"index": 0, "message": message,
                     "finish_reason": "tool_calls" if calls else "stop"}],
        "usage": _usage(body, entry),
    }


def _stream(body: dict, entry: dict):
    base = {"id": f"chatcmpl-{uuid.uuid4().hex[:12]}", "object": "chat.completion.chunk",
            "created": int(time.time()), "model": body.get("model", "fake")}

    def chunk(delta: dict, finish: str | None = None) -> str:
        data = {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
        return f"data: {json.dumps(data, ensure_ascii=False)}\n\n"

    yield chunk({"role": "assistant", "content": ""})
    text = entry.get("content") or ""
    for i in range(0, len(text), DELTA_CHARS):
        yield chunk({"content": text[i:i + DELTA_CHARS]})
    for index, call in enumerate(entry.get("tool_calls", [])):
        args = _arguments(call)
        yield chunk({"tool_calls": [{"index": index, "id": f"call_{index}", "type": "function",
                                     "function": {"name": _name(call, body),
                                                  "arguments": ""}}]})
        for i in range(0, len(args), 8):
            yield chunk({"tool_calls": [{"index": index,
                                         "function": {"arguments": args[i:i + 8]}}]})
    yield chunk({}, "tool_calls" if entry.get("tool_calls") else "stop")
    usage = {**base, "choices": [], "usage": _usage(body, entry)}
    yield f"data: {json.dumps(usage, ensure_ascii=False)}\n\n"
    yield "data: [DONE]\n\n"
