"""Offline face photos for tests and benchmarks, from test-only dependencies.

scikit-image ships ``astronaut`` (Eileen Collins, an official portrait on a light
plain background) and ``chelsea`` (a cat); matplotlib ships Grace Hopper on a
dark background. Two different people, a non-face, and ready-made variants:
an ID card carrying a person's photo, a two-face composite, a tilted head.
Needs the ``test`` extra (scikit-image, matplotlib).
"""

from __future__ import annotations

import io

from PIL import Image

# Head and shoulders around each face (left, top, right, bottom), for an ID card's photo.
ASTRONAUT_HEAD = (128, 10, 318, 260)
HOPPER_HEAD = (100, 20, 436, 460)


def astronaut() -> Image.Image:
    from skimage import data

    return Image.fromarray(data.astronaut())


def hopper() -> Image.Image:
    from matplotlib import cbook

    with cbook.get_sample_data("grace_hopper.jpg") as fh:
        return Image.open(io.BytesIO(fh.read())).convert("RGB")


def cat() -> Image.Image:
    from skimage import data

    return Image.fromarray(data.chelsea())


def astronaut_head() -> Image.Image:
    return astronaut().crop(ASTRONAUT_HEAD)


def hopper_head() -> Image.Image:
    return hopper().crop(HOPPER_HEAD)


def two_people() -> Image.Image:
    """The astronaut and Grace Hopper side by side, at similar face sizes."""
    left = astronaut()
    right = hopper().resize((round(512 * 0.55), round(600 * 0.55)))
    canvas = Image.new("RGB", (left.width + right.width, left.height), (200, 200, 200))
    canvas.paste(left, (0, 0))
    canvas.paste(right, (left.width, 40))
    return canvas


def tilted(image: Image.Image, degrees: float) -> Image.Image:
    """``image`` rotated, the corners filled with the light background."""
    return image.rotate(degrees, resample=Image.Resampling.BICUBIC, fillcolor=(200, 196, 190))


def jpeg(image: Image.Image, quality: int = 90) -> bytes:
    out = io.BytesIO()
    image.convert("RGB").save(out, "JPEG", quality=quality)
    return out.getvalue()
