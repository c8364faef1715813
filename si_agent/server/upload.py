"""``POST /api/upload``: a photo for the step being awaited (multipart ``file``, optional ``step``).

The answer is the same turn object as ``/api/chat``. A refused photo is a JSON
error in Chinese (413 too large, 415 not an allowed image, 400 no step awaits
one, 503 with ``Retry-After`` when this process is already decoding as many photos
as ``SI_UPLOAD_DECODES`` allows) and the session does not change. Photos are never
logged and never sent to a model; they are kept after the step only if
``SI_UPLOAD_RETENTION_DAYS`` says so.

Cheap checks come first, so that no photo is decoded for nothing: the session is
read (through the store) to see that a step awaits a photo, and the one named; then
the image header is read to refuse a declared size above ``SI_UPLOAD_MAX_PIXELS``;
only then is a decode slot taken (``si_agent.uploads.DecodeSlots``) and the photo
decoded and cleaned. The controller checks the awaited step again in the turn
itself, where it is decided under the session's lock.
"""

from __future__ import annotations

import logging

from flask import Blueprint, current_app, jsonify, request
from werkzeug.exceptions import RequestEntityTooLarge

from si_agent.config.settings import Settings
from si_agent.errors import NoStepAwaited
from si_agent.flow.controller import Controller
from si_agent.flow.result import awaited_step
from si_agent.server.auth import current_user
from si_agent.server.errors import ApiError
from si_agent.server.identity import token_required
from si_agent.session.base import session_ref
from si_agent.uploads import DecodeSlots, UploadRejected, UploadVault, check_header, clean_image

log = logging.getLogger(__name__)
bp = Blueprint("upload", __name__)
MULTIPART_OVERHEAD = 64 * 1024  # boundaries and the small "step" part


@bp.post("/api/upload")
@token_required
def upload():
    user = current_user()
    settings: Settings = current_app.config["SI_SETTINGS"]
    controller: Controller = current_app.config["SI_CONTROLLER"]
    request.max_content_length = settings.upload_max_bytes + MULTIPART_OVERHEAD
    if request.mimetype != "multipart/form-data":
        raise ApiError(415, "not_an_image")
    try:
        part = request.files.get("file")
    except RequestEntityTooLarge:
        raise ApiError(413, "upload_too_large", mb=settings.upload_max_bytes // 2**20) from None
    if part is None:
        raise ApiError(400, "missing_file")
    step = (request.form.get("step") or "").strip() or None
    if not _step_awaited(controller, user, step):
        raise ApiError(400, "no_step_awaited")
    data = part.read(settings.upload_max_bytes + 1)
    limits = {"max_bytes": settings.upload_max_bytes, "max_pixels": settings.upload_max_pixels}
    slots: DecodeSlots = current_app.config["SI_DECODE_SLOTS"]
    try:
        check_header(data, **limits)
        if not slots.acquire():
            log.warning("upload refused for %s: all %d decode slots busy", session_ref(user), slots.slots)
            raise ApiError(503, "uploads_busy")
        try:
            image = clean_image(data, **limits)
        finally:
            slots.release()
    except UploadRejected as err:
        log.info("upload refused for %s: %s", session_ref(user), err.code)  # never the image itself
        raise ApiError(err.status, err.code, mb=settings.upload_max_bytes // 2**20,
                       mp=settings.upload_max_pixels // 10**6) from None
    try:
        turn = controller.upload(user, image, step)
    except NoStepAwaited:
        raise ApiError(400, "no_step_awaited") from None
    vault: UploadVault = current_app.config["SI_UPLOAD_VAULT"]
    vault.keep(user, image)
    return jsonify(turn.model_dump(mode="json"))


def _step_awaited(controller: Controller, user: str, step_id: str | None) -> bool:
    """Whether the stored session awaits a photo (for ``step_id``, when one is named):
    one store read, before any image work (the turn checks again under its lock)."""
    session = controller.store.load(user)
    if session is None or not session.business_id:
        return False
    awaited = awaited_step(session, controller.catalog.get(session.business_id))
    return awaited is not None and (step_id is None or step_id == awaited.id)
