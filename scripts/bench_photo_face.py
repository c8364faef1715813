"""Accuracy and speed of the local face verifier (si_agent.photo.face) on offline images.

Two people ship with the test dependencies: the astronaut Eileen Collins
(scikit-image) and Grace Hopper (matplotlib). Each photo is augmented the way a
phone photo varies (rotation ±5°, Gaussian blur, JPEG quality 50, brightness
±30 %, and all at once); same-person pairs are every pair of one person's
variants, different-person pairs every cross pair. A photo the quality gate
refuses counts as "not accepted" (it lowers TAR, never raises FAR).

A second row compares scikit-image's LFW subset (25x25 px faces of other people,
upscaled, gate off because they are tiny) with both originals: more impostors.

Run: python scripts/bench_photo_face.py   (needs pip install -e '.[test]')
Prints a markdown table: TAR, FAR, refused pairs, ms per comparison.
"""

from __future__ import annotations

import statistics
import time

import cv2
import numpy as np
from skimage import data

from si_agent.photo.face import SFACE_COSINE_THRESHOLD, QualityGate, compare
from si_agent.testing import faces

Pair = tuple[bytes, bytes, bool]  # (selfie, reference, same person?)


def encode(image: np.ndarray) -> bytes:
    return cv2.imencode(".png", image)[1].tobytes()


def rotate(image: np.ndarray, degrees: float) -> np.ndarray:
    h, w = image.shape[:2]
    matrix = cv2.getRotationMatrix2D((w / 2, h / 2), degrees, 1.0)
    return cv2.warpAffine(image, matrix, (w, h), borderMode=cv2.BORDER_REFLECT)


def jpeg(image: np.ndarray, quality: int = 50) -> np.ndarray:
    buf = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, quality])[1]
    return cv2.imdecode(buf, cv2.IMREAD_COLOR)


def brightness(image: np.ndarray, factor: float) -> np.ndarray:
    return np.clip(image.astype(np.float32) * factor, 0, 255).astype(np.uint8)


AUGMENTATIONS = {
    "original": lambda im: im,
    "rot+5": lambda im: rotate(im, 5),
    "rot-5": lambda im: rotate(im, -5),
    "blur1.5": lambda im: cv2.GaussianBlur(im, (0, 0), 1.5),
    "jpeg50": jpeg,
    "bright+30%": lambda im: brightness(im, 1.3),
    "bright-30%": lambda im: brightness(im, 0.7),
    "all": lambda im: jpeg(brightness(cv2.GaussianBlur(rotate(im, 5), (0, 0), 1.5), 0.7)),
}


def people() -> dict[str, np.ndarray]:
    """The two people's photos, BGR."""
    return {name: cv2.cvtColor(np.asarray(photo()), cv2.COLOR_RGB2BGR)
            for name, photo in (("astronaut", faces.astronaut), ("hopper", faces.hopper))}


def variants() -> dict[str, list[bytes]]:
    """Every augmentation of each person's photo, PNG-encoded, in ``AUGMENTATIONS`` order."""
    return {name: [encode(aug(image)) for aug in AUGMENTATIONS.values()]
            for name, image in people().items()}


def lfw_faces() -> list[bytes]:
    out = []
    for face in data.lfw_subset()[:100]:  # the first 100 are faces, the rest are not
        gray = cv2.resize((face * 255).astype(np.uint8), (112, 112), interpolation=cv2.INTER_CUBIC)
        gray = cv2.copyMakeBorder(gray, 56, 56, 56, 56, cv2.BORDER_REPLICATE)
        out.append(encode(cv2.cvtColor(gray, cv2.COLOR_GRAY2BGR)))
    return out


def run(pairs: list[Pair], gate: QualityGate | None = None) -> dict:
    accepted_same = accepted_diff = refused = same = diff = 0
    timings, impostor_scores, genuine_scores = [], [], []
    for a, b, is_same in pairs:
        start = time.perf_counter()
        result = compare(a, b, gate=gate)
        timings.append((time.perf_counter() - start) * 1000)
        if result.error:
            refused += 1
        elif is_same:
            genuine_scores.append(result.score)
        else:
            impostor_scores.append(result.score)
        same += is_same
        diff += not is_same
        accepted_same += is_same and result.same_person
        accepted_diff += (not is_same) and result.same_person
    return {
        "same": same, "diff": diff, "refused": refused,
        "tar": accepted_same / same if same else float("nan"),
        "far": accepted_diff / diff if diff else float("nan"),
        "min_genuine": min(genuine_scores, default=float("nan")),
        "max_impostor": max(impostor_scores, default=float("nan")),
        "ms": statistics.median(timings),
    }


HEADER = ("| pairs | same / diff | refused pairs | TAR | FAR | min genuine | max impostor "
          "| ms per comparison (median) |\n|---|---|---|---|---|---|---|---|")


def row(label: str, r: dict) -> str:
    """One row under ``HEADER``."""
    return (f"| {label} | {r['same']} / {r['diff']} | {r['refused']} | {r['tar']:.3f} "
            f"| {r['far']:.3f} | {r['min_genuine']:.3f} | {r['max_impostor']:.3f} "
            f"| {r['ms']:.1f} |")


def measure() -> list[tuple[str, dict]]:
    """(label, ``run`` result) for the augmented pairs and the LFW impostors."""
    photos = variants()
    compare(photos["astronaut"][0], photos["astronaut"][0])  # load the models
    pairs: list[Pair] = []
    for person in photos.values():
        pairs += [(person[i], person[j], True)
                  for i in range(len(person)) for j in range(i + 1, len(person))]
    a, b = photos.values()
    pairs += [(x, y, False) for x in a for y in b]
    lfw_pairs = [(face, person[0], False) for face in lfw_faces() for person in photos.values()]
    return [("astronaut + hopper, augmented", run(pairs)),
            ("LFW subset vs both (gate off)", run(lfw_pairs, QualityGate(0, 0.0, 0.0)))]


def table(rows: list[tuple[str, dict]]) -> str:
    return "\n".join([f"Threshold: SFace cosine >= {SFACE_COSINE_THRESHOLD}; augmentations: "
                      + ", ".join(AUGMENTATIONS), "", HEADER]
                     + [row(label, r) for label, r in rows])


def main() -> None:
    print(table(measure()))


if __name__ == "__main__":
    main()
