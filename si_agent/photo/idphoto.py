"""证件照 (the photo printed on a card) from a citizen's own photo, for the ``id_photo`` step.

The photo must show one face (the same detector and quality gates as face
verification, ``si_agent.photo.face``), looking straight at the camera, in front
of a plain light background. It is cropped around the face to the social
security card's 358x441 pixels (26x32 mm at 350 dpi) and encoded as JPEG:

- the face box (YuNet: brows to chin) is ``FACE_SHARE`` of the height, centred
  on the eyes horizontally, with its middle at ``FACE_MIDDLE`` of the height;
- frontal: the nose tip within ``MAX_YAW`` eye distances of the eyes' middle,
  and the eye line within ``MAX_ROLL`` degrees of horizontal;
- background: the strip above the head and the two upper side strips of the
  crop are light (mean gray >= ``MIN_BACKGROUND``) and plain (standard deviation
  <= ``MAX_BACKGROUND_SPREAD``);
- a crop that would run off the photo by more than ``MAX_OVERFLOW`` of its size
  is re-asked ("too close"); a smaller overflow repeats the edge pixels.

Needs the ``photo`` extra, like face verification.
"""

from __future__ import annotations

import math

from pydantic import BaseModel, ConfigDict

from si_agent import replies
from si_agent.photo.face import PROBLEM_TEXTS, QualityGate, Unusable, decode_image, one_face

SIZE = (358, 441)  # width, height
FACE_SHARE = 0.5
FACE_MIDDLE = 0.52
MAX_YAW = 0.25
MAX_ROLL = 10.0
MIN_BACKGROUND = 150.0
MAX_BACKGROUND_SPREAD = 28.0
MAX_OVERFLOW = 0.08
JPEG_QUALITY = 92


class IdPhoto(BaseModel):
    """The cropped JPEG, or the Chinese re-ask and a short problem code."""

    model_config = ConfigDict(frozen=True)

    jpeg: bytes | None = None
    error: str | None = None
    problem: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


def make_id_photo(data: bytes, gate: QualityGate | None = None) -> IdPhoto:
    """Check ``data`` (an encoded photo) and crop it to a 358x441 证件照."""
    import cv2
    import numpy as np

    try:
        image, face, _ = one_face(decode_image(data), gate or QualityGate())
    except Unusable as unusable:
        return IdPhoto(error=PROBLEM_TEXTS[unusable.problem], problem=unusable.problem.value)
    y, h = float(face[1]), float(face[3])
    right_eye, left_eye, nose = face[4:6], face[6:8], face[8:10]
    eye_x = (right_eye[0] + left_eye[0]) / 2
    eye_distance = math.hypot(left_eye[0] - right_eye[0], left_eye[1] - right_eye[1])
    roll = math.degrees(math.atan2(left_eye[1] - right_eye[1], left_eye[0] - right_eye[0]))
    if (not eye_distance or abs(nose[0] - eye_x) / eye_distance > MAX_YAW
            or abs(roll) > MAX_ROLL):
        return IdPhoto(error=replies.ID_PHOTO_NOT_FRONTAL, problem="not_frontal")

    crop_h = h / FACE_SHARE
    crop_w = crop_h * SIZE[0] / SIZE[1]
    left = eye_x - crop_w / 2
    top = (y + h / 2) - FACE_MIDDLE * crop_h
    height, width = image.shape[:2]
    overflow = max(-left, -top, left + crop_w - width, top + crop_h - height, 0.0)
    if overflow > MAX_OVERFLOW * crop_h:
        return IdPhoto(error=replies.ID_PHOTO_TOO_CLOSE, problem="too_close")
    pad = math.ceil(overflow) + 1
    padded = cv2.copyMakeBorder(image, pad, pad, pad, pad, cv2.BORDER_REPLICATE)
    x0, y0 = round(left) + pad, round(top) + pad
    crop = padded[y0:y0 + round(crop_h), x0:x0 + round(crop_w)]
    photo = cv2.resize(crop, SIZE, interpolation=cv2.INTER_AREA if crop_h > SIZE[1]
                       else cv2.INTER_CUBIC)

    gray = cv2.cvtColor(photo, cv2.COLOR_BGR2GRAY).astype("float64")
    band_h, band_w = round(SIZE[1] * 0.06), round(SIZE[0] * 0.08)
    upper = round(SIZE[1] * 0.45)
    background = np.concatenate([gray[:band_h].ravel(), gray[:upper, :band_w].ravel(),
                                 gray[:upper, -band_w:].ravel()])
    if background.mean() < MIN_BACKGROUND or background.std() > MAX_BACKGROUND_SPREAD:
        return IdPhoto(error=replies.ID_PHOTO_BACKGROUND, problem="background")
    ok, encoded = cv2.imencode(".jpg", photo, [cv2.IMWRITE_JPEG_QUALITY, JPEG_QUALITY])
    if not ok:  # pragma: no cover - OpenCV always encodes a valid BGR array
        raise RuntimeError("JPEG encoding failed")
    return IdPhoto(jpeg=encoded.tobytes())
