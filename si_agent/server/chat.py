"""The chat API: ``POST /api/chat`` (JSON or SSE), ``GET``/``DELETE /api/session``,
``GET /api/session/history`` and ``GET /api/session/events``."""

from __future__ import annotations

import itertools
import json
import logging
import queue
import re
import threading
import time
from collections.abc import Iterator

from flask import Blueprint, Response, current_app, jsonify, request, stream_with_context
from flask_jwt_extended import get_jwt

from si_agent.config.settings import Settings
from si_agent.errors import SessionConflict, StoreUnavailable
from si_agent.flow.controller import Controller
from si_agent.flow.result import TurnResult
from si_agent.server.auth import current_user, json_body
from si_agent.server.errors import ApiError, redis_outages
from si_agent.server.identity import token_required
from si_agent.server.revocation import revoke_token
from si_agent.server.streams import Slot, respond

log = logging.getLogger(__name__)
bp = Blueprint("chat", __name__)
DELTA_CHARS = 6  # characters per streamed delta of a templated reply
# How long /api/session/events follows a submission; each stream holds a server
# thread meanwhile, bounded by si_agent.server.streams (docs/deploy.md).
WATCH_SECONDS = 120.0
GROUP_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
# Characters nobody types and nobody sees: control characters (NUL and the like; line
# breaks and tabs excepted) and the bidirectional embeddings, overrides and isolates.
INVISIBLE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
# A turn that fails on these is answered 503 store_unavailable, as the app's error
# handlers answer them outside a stream: the wrapped store error, and redis-py's
# connection errors that a store did not wrap (step files, jobs next to the sessions).
# What only a turn's answer carries: a session view (GET, DELETE, events) leaves them out.
TURN_ONLY = {"reply", "message"}
_STORE_DOWN: tuple[type[Exception], ...] = (StoreUnavailable, *redis_outages())


def _controller() -> Controller:
    return current_app.config["SI_CONTROLLER"]


def _settings() -> Settings:
    return current_app.config["SI_SETTINGS"]


@bp.post("/api/chat")
@token_required
def chat():
    user = current_user()
    body = json_body()
    message = body.get("message")
    if message is not None and not isinstance(message, str):
        raise ApiError(400, "message_not_text")  # 123, [..], {..}, true: no text typed
    # A message of nothing but invisible characters is empty; one with text keeps them (a
    # field's validator refuses control and direction characters with its reason).
    if message is None or not INVISIBLE.sub("", message).strip():
        raise ApiError(400, "empty_message")
    try:
        message.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates: not text a person typed
        raise ApiError(400, "invalid_characters") from None
    limit = _settings().max_message_chars
    if len(message) > limit:
        raise ApiError(413, "message_too_long", limit=limit)
    group_id = body.get("group_id")
    if group_id is not None and not (isinstance(group_id, str) and GROUP_ID.fullmatch(group_id)):
        raise ApiError(400, "invalid_group_id")
    if _wants_stream():
        events = _stream_turn(_controller(), user, message, group_id)
        # A turn that fails before its first event (the store is down) is an HTTP
        # error like any other (503 with Retry-After), not a 200 stream of one error.
        first = next(events)
        return Response(stream_with_context(itertools.chain([first], events)),
                        mimetype="text/event-stream",
                        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})
    turn = _controller().handle(user, message, group_id=group_id)
    # pydantic writes the JSON itself: no intermediate dict for Flask to encode again
    return Response(turn.model_dump_json(), mimetype="application/json")


@bp.get("/api/session")
@token_required
def get_session():
    user = current_user()
    turn = _controller().current(user)
    body = turn.model_dump(mode="json", exclude=TURN_ONLY)
    if request.args.get("debug") in ("1", "true"):
        if _settings().auth_mode != "dev":
            raise ApiError(403, "debug_disabled")
        session = _controller().store.load(user)
        body["memory"] = [r.model_dump(mode="json") for r in session.memory] if session else []
    return jsonify(body)


@bp.get("/api/session/history")
@token_required
def session_history():
    """The recent messages as the page showed them, for a page loaded again; with the
    seconds since the last one (a page opened after a long pause asks before resuming)."""
    messages = _controller().transcript(current_user())
    idle = max(0, round(time.time() - messages[-1].at)) if messages else None
    return jsonify({"messages": [m.model_dump(mode="json") for m in messages],
                    "idle_seconds": idle})


JOB_ID_CHARS = 64  # the longest ``job`` a page may name (ids are 32 hex characters)


@bp.get("/api/session/events")
@token_required
def session_events():
    """SSE: ``job`` events while a submission runs, then the outcome as a ``turn`` event."""
    user = current_user()
    controller = _controller()
    # The job the page saw (its view's job.id): an outcome another stream of this session
    # delivered meanwhile is told to this one too. Only the session's own job counts.
    follows = request.args.get("job") or None
    if follows is not None and len(follows) > JOB_ID_CHARS:
        raise ApiError(400, "invalid_job")

    def events(slot: Slot) -> Iterator[str]:
        # A poll (every live stream taken: si_agent.server.streams) says how things are now.
        for view in controller.watch(user, timeout=WATCH_SECONDS if slot.live else 0.0,
                                     stop=slot.ended if slot.live else None, follows=follows):
            body = view.model_dump(mode="json", exclude={"message"})
            if view.state == "executing":
                yield _sse("job", {k: v for k, v in body.items() if k != "reply"})
            else:
                yield _sse("turn", {**body, "reply": view.notice or ""})

    # The store being down is an HTTP error (503), raised before anything is streamed.
    return respond("job", user, events)


@bp.delete("/api/session")
@token_required
def delete_session():
    """Start over; the access token used is revoked (the page gets a new one)."""
    turn = _controller().reset(current_user())
    revoke_token(get_jwt())
    return jsonify(turn.model_dump(mode="json", exclude=TURN_ONLY))


def _wants_stream() -> bool:
    best = request.accept_mimetypes.best_match(["application/json", "text/event-stream"])
    return best == "text/event-stream"


def _sse(event: str, data: dict) -> str:
    return f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n"


_DONE = object()


def _stream_turn(controller: Controller, user: str, message: str,
                 group_id: str | None = None) -> Iterator[str]:
    """Run the turn in a worker thread; stream a model's text as it comes, then the rest.

    Templated replies are streamed in small chunks too, so every client reads
    one kind of stream; the final ``turn`` event carries the whole turn object.
    A failure before anything was streamed is raised (``ApiError``) from the first
    ``next()``; after that it ends the stream as an ``error`` event.
    """
    pieces: queue.Queue = queue.Queue()
    outcome: dict[str, object] = {}

    def work() -> None:
        try:
            outcome["turn"] = controller.handle(user, message, on_delta=pieces.put,
                                                group_id=group_id)
        except _STORE_DOWN as exc:
            outcome["error"] = ApiError(503, "store_unavailable")
            log.error("session store unavailable: %s: %s", type(exc).__name__, exc)
        except SessionConflict as exc:
            outcome["error"] = ApiError(409)
            log.warning("%s", exc)
        except Exception:  # a thread boundary: report, never hang the stream
            log.exception("turn failed while streaming")
            outcome["error"] = ApiError(500)
        finally:
            pieces.put(_DONE)

    threading.Thread(target=work, name="si-turn", daemon=True).start()
    streamed: list[str] = []
    while (piece := pieces.get()) is not _DONE:
        streamed.append(piece)
        yield _sse("delta", {"text": piece})
    error = outcome.get("error")
    if isinstance(error, ApiError):
        if not streamed:
            raise error
        yield _sse("error", {"code": error.code, "message": error.message})
        return
    turn = outcome["turn"]
    assert isinstance(turn, TurnResult)
    prefix = "".join(streamed)
    if turn.reply.startswith(prefix):
        rest = turn.reply[len(prefix):]
    else:  # the streamed text was not kept (e.g. the model failed mid-way): start over
        yield _sse("reset", {})
        rest = turn.reply
    for i in range(0, len(rest), DELTA_CHARS):
        yield _sse("delta", {"text": rest[i:i + DELTA_CHARS]})
    yield _sse("turn", turn.model_dump(mode="json"))
