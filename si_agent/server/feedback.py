"""``POST /api/feedback``: a citizen's 👍/👎 (and a short reason) on one of the replies.

The body names the reply by its turn number (``turn`` of the turn object), a ``rating``
(``up`` or ``down``) and an optional ``reason`` of at most ``REASON_CHARS`` characters.
It is stored with that turn in the turn-event record (``si_agent.turns``), the reason
masked like every citizen's text there; rating the same reply again replaces the rating.
Only a reply of the caller's own current conversation can be rated.
"""

from __future__ import annotations

from flask import Blueprint, current_app, jsonify

from si_agent.flow.controller import Controller
from si_agent.server.auth import current_user, json_body
from si_agent.server.errors import ApiError
from si_agent.server.identity import token_required
from si_agent.turns.log import REASON_CHARS

bp = Blueprint("feedback", __name__)
RATINGS = ("up", "down")


@bp.post("/api/feedback")
@token_required
def feedback():
    controller: Controller = current_app.config["SI_CONTROLLER"]
    body = json_body()
    rating = body.get("rating")
    if rating not in RATINGS:
        raise ApiError(400, "invalid_rating")
    turn = body.get("turn")
    if not isinstance(turn, int) or isinstance(turn, bool) or turn < 1:
        raise ApiError(400, "invalid_feedback_turn")
    reason = body.get("reason", "")
    if reason is None:
        reason = ""
    if not isinstance(reason, str):
        raise ApiError(400, "feedback_reason_not_text")
    try:
        reason.encode("utf-8")
    except UnicodeEncodeError:
        raise ApiError(400, "invalid_characters") from None
    if len(reason.strip()) > REASON_CHARS:
        raise ApiError(400, "feedback_reason_too_long", limit=REASON_CHARS)
    user = current_user()
    session = controller.store.load(user)
    if session is None or turn > session.turn:
        raise ApiError(400, "invalid_feedback_turn")
    turns = controller.turns
    conversation = turns.conversation_of(user, session.started_at)
    if not turns.has_turn(conversation, turn):
        raise ApiError(400, "invalid_feedback_turn")
    record = turns.feedback(conversation, turn, rating, reason)
    return jsonify({"turn": record.turn, "rating": record.rating, "saved": True})
