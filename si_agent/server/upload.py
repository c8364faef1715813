"""``POST /api/upload``: a photo for the step being awaited (multipart ``file``, optional ``step``).

The answer is the same turn object as ``/api/chat``. A refused photo is a JSON
error in Chinese (413 too large, 415 not an allowed image, 400 no step awaits
one) and the session does not change. Photos are never logged and never sent to
a model; they are kept after the step only if ``SI_UPLOAD_RETENTION_DAYS`` says so.
"""

from __future__ import annotations

import logging

from flask import Blueprint, current_app, jsonify, request
from werkzeug.exceptions import RequestEntityTooLarge

from si_agent.config.settings import Settings
from si_agent.errors import NoStepAwaited
from si_agent.flow.controller import Controller
from si_agent.server.auth import current_user
from si_agent.server.errors import ApiError
from si_agent.server.identity import token_required
from si_agent.uploads import UploadRejected, UploadVault, clean_image

log = logging.getLogger(__name__)
bp = Blueprint("upload", __name__)
MULTIPART_OVERHEAD = 64 * 1024  # boundaries and the small "step" part


@bp.post("/api/upload")
@token_required
def upload():
    user = current_user()
    settings: Settings = current_app.config["SI_SETTINGS"]
    request.max_content_length = settings.upload_max_bytes + MULTIPART_OVERHEAD
    if request.mimetype != "multipart/form-data":
        raise ApiError(415, "not_an_image")
    try:
        part = request.files.get("file")
    except RequestEntityTooLarge:
        raise ApiError(413, "upload_too_large", mb=settings.upload_max_bytes // 2**20) from None
    if part is None:
        raise ApiError(400, "missing_file")
    data = part.read(settings.upload_max_bytes + 1)
    step = (request.form.get("step") or "").strip() or None
    try:
        image = clean_image(data, max_bytes=settings.upload_max_bytes,
                            max_pixels=settings.upload_max_pixels)
    except UploadRejected as err:
        log.info("upload refused for %s: %s", user[:8], err.code)  # never the image itself
        raise ApiError(err.status, err.code, mb=settings.upload_max_bytes // 2**20,
                       mp=settings.upload_max_pixels // 10**6) from None
    controller: Controller = current_app.config["SI_CONTROLLER"]
    try:
        turn = controller.upload(user, image, step)
    except NoStepAwaited:
        raise ApiError(400, "no_step_awaited") from None
    vault: UploadVault = current_app.config["SI_UPLOAD_VAULT"]
    vault.keep(user, image)
    return jsonify(turn.model_dump(mode="json"))
