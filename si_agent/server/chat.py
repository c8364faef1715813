"""The chat API: ``POST /api/chat`` (JSON or SSE), ``GET``/``DELETE /api/session``."""

from __future__ import annotations

import json
from collections.abc import Iterator

from flask import Blueprint, Response, current_app, jsonify, request, stream_with_context
from flask_jwt_extended import jwt_required

from si_agent.config.settings import Settings
from si_agent.flow.controller import Controller
from si_agent.flow.turn import TurnResult
from si_agent.server.auth import current_user, json_body
from si_agent.server.errors import ApiError

bp = Blueprint("chat", __name__)
DELTA_CHARS = 6  # characters per streamed delta of a templated reply


def _controller() -> Controller:
    return current_app.config["SI_CONTROLLER"]


def _settings() -> Settings:
    return current_app.config["SI_SETTINGS"]


@bp.post("/api/chat")
@jwt_required()
def chat():
    user = current_user()
    body = json_body()
    message = body.get("message")
    if not isinstance(message, str) or not message.strip():
        raise ApiError(400, "empty_message", "消息不能为空。")
    limit = _settings().max_message_chars
    if len(message) > limit:
        raise ApiError(413, "message_too_long", f"消息不能超过{limit}个字，请精简后再发送。")
    turn = _controller().handle(user, message)
    if _wants_stream():
        return Response(stream_with_context(_events(turn)), mimetype="text/event-stream",
                        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})
    return jsonify(turn.model_dump(mode="json"))


@bp.get("/api/session")
@jwt_required()
def get_session():
    turn = _controller().current(current_user())
    return jsonify(turn.model_dump(mode="json", exclude={"reply"}))


@bp.delete("/api/session")
@jwt_required()
def delete_session():
    turn = _controller().reset(current_user())
    return jsonify(turn.model_dump(mode="json", exclude={"reply"}))


def _wants_stream() -> bool:
    best = request.accept_mimetypes.best_match(["application/json", "text/event-stream"])
    return best == "text/event-stream"


def _sse(event: str, data: dict) -> str:
    return f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n"


def _events(turn: TurnResult) -> Iterator[str]:
    reply = turn.reply
    for i in range(0, len(reply), DELTA_CHARS):
        yield _sse("delta", {"text": reply[i:i + DELTA_CHARS]})
    yield _sse("turn", turn.model_dump(mode="json"))
