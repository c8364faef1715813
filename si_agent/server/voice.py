"""``POST /api/voice``: a spoken message (multipart ``file``: WebM/Opus, Ogg, WAV, MP3, M4A).

The clip is checked (``si_agent.voice.audio``: at most ``SI_VOICE_MAX_BYTES`` and
``SI_VOICE_MAX_SECONDS``; 413, 415, 400 in Chinese, the session unchanged),
transcribed with a prompt made of the businesses and the awaited field, normalised,
and run through the same turn as a typed message, marked as spoken (a long number
heard is read back before it is stored). The answer is the turn object with
``transcript``. The audio is never stored and never logged; only its length is.
"""

from __future__ import annotations

import logging

from flask import Blueprint, current_app, jsonify, request
from werkzeug.exceptions import RequestEntityTooLarge

from si_agent.config.settings import Settings
from si_agent.errors import UploadRejected
from si_agent.flow.controller import Controller
from si_agent.server.auth import current_user
from si_agent.server.errors import ApiError
from si_agent.server.identity import token_required
from si_agent.session.base import session_ref
from si_agent.voice import Recognizer, RecognizerUnavailable
from si_agent.voice.listen import listen

log = logging.getLogger(__name__)
bp = Blueprint("voice", __name__)
MULTIPART_OVERHEAD = 16 * 1024


@bp.post("/api/voice")
@token_required
def voice():
    user = current_user()
    settings: Settings = current_app.config["SI_SETTINGS"]
    controller: Controller = current_app.config["SI_CONTROLLER"]
    recognizer: Recognizer | None = current_app.config["SI_RECOGNIZER"]
    if recognizer is None:
        raise ApiError(503, "voice_off")
    request.max_content_length = settings.voice_max_bytes + MULTIPART_OVERHEAD
    mb = max(1, settings.voice_max_bytes // 2**20)
    if request.mimetype != "multipart/form-data":
        raise ApiError(415, "not_audio")
    try:
        part = request.files.get("file")
    except RequestEntityTooLarge:
        raise ApiError(413, "voice_too_large", mb=mb) from None
    if part is None:
        raise ApiError(400, "missing_audio")
    data = part.read(settings.voice_max_bytes + 1)
    try:
        text = listen(recognizer, data, controller.catalog, controller.store.load(user),
                      max_bytes=settings.voice_max_bytes, max_seconds=settings.voice_max_seconds)
    except UploadRejected as err:
        log.info("voice clip refused for %s: %s", session_ref(user), err.code)  # never the audio
        raise ApiError(err.status, err.code, mb=mb, seconds=settings.voice_max_seconds) \
            from None
    except RecognizerUnavailable:
        raise ApiError(503, "asr_unavailable") from None
    finally:
        del data
    if not text:
        raise ApiError(400, "no_speech")
    turn = controller.handle(user, text, spoken=True)
    # What was heard, as the page shows the citizen's message (numbers masked).
    return jsonify({**turn.model_dump(mode="json"), "transcript": turn.message})
