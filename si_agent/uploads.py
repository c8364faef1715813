"""Uploaded photos: checked, cleaned and (only if configured) kept encrypted.

``clean_image`` accepts JPEG, PNG or WebP, recognised by their magic bytes *and*
by decoding them with Pillow, at most ``max_bytes`` and ``max_pixels``. The result is
re-encoded from the pixels, orientation applied and EXIF (GPS, camera, time)
dropped, so nothing but the picture travels further. A refusal is an
``UploadRejected`` with an HTTP status (413 too large, 415 not an allowed image)
and a Chinese message for the citizen.

Decoding costs memory in proportion to the *declared* size (width × height × 4
bytes, several times over while it is transposed and re-encoded), not to the
file's: a 150 KB PNG may declare 40 megapixels. So ``check_header`` reads only
the header and refuses a declared size above ``max_pixels`` before any pixel is
decoded, and ``DecodeSlots`` caps how many decodes one process runs at once, so
a process needs at most ``slots × max_pixels`` worth of decoding memory. The API
asks both only after it has checked that a photo step is awaited
(``si_agent.server.upload``).

Images are never logged and never sent to a model. ``UploadVault`` keeps them
after the step only when ``SI_UPLOAD_RETENTION_DAYS`` is above 0, encrypted at
rest (Fernet, key from ``SI_UPLOAD_KEY``), and deletes older ones as it writes.
"""

from __future__ import annotations

import hashlib
import io
import logging
import threading
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

from si_agent.errors import UploadRejected

log = logging.getLogger(__name__)

MEDIA_TYPES = {"JPEG": "image/jpeg", "PNG": "image/png", "WEBP": "image/webp"}
_MAGIC = (
    (b"\xff\xd8\xff", "JPEG"),
    (b"\x89PNG\r\n\x1a\n", "PNG"),
)
TOO_LARGE = "照片太大了，请上传不超过{mb}MB的照片。"
TOO_MANY_PIXELS = "照片尺寸过大，请上传不超过{mp}百万像素的照片。"
NOT_AN_IMAGE = "只能上传 JPG、PNG 或 WebP 格式的照片。"
BROKEN_IMAGE = "照片文件已损坏或不完整，请重新拍摄上传。"
NO_STEP = "当前没有需要上传照片的步骤。"
BUSY = "正在处理的照片较多，请稍等几秒再上传。"


@dataclass(frozen=True)
class CleanImage:
    """A checked photo, re-encoded without metadata."""

    data: bytes
    media_type: str
    width: int
    height: int

    @property
    def digest(self) -> str:
        return hashlib.sha256(self.data).hexdigest()


def sniff(data: bytes) -> str | None:
    """The format the magic bytes announce: JPEG, PNG, WEBP, or None."""
    for magic, name in _MAGIC:
        if data.startswith(magic):
            return name
    if len(data) >= 12 and data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "WEBP"
    return None


@dataclass(frozen=True)
class Declared:
    """What an image's header declares, read without decoding its pixels."""

    format: str
    width: int
    height: int


def check_header(data: bytes, *, max_bytes: int, max_pixels: int) -> Declared:
    """The format and declared size of an acceptable photo, or ``UploadRejected``.

    Reads the magic bytes and the header only (and checks the file's structure
    without decoding it): cheap whatever the image declares.
    """
    from PIL import Image  # only needed when a photo arrives

    if len(data) > max_bytes:
        raise UploadRejected(413, "upload_too_large", TOO_LARGE.format(mb=max_bytes // 2**20))
    announced = sniff(data)
    if announced is None:
        raise UploadRejected(415, "not_an_image", NOT_AN_IMAGE)
    too_many = UploadRejected(413, "too_many_pixels", TOO_MANY_PIXELS.format(mp=max_pixels // 10**6))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(data)) as probe:
                if probe.format != announced:
                    raise UploadRejected(415, "not_an_image", NOT_AN_IMAGE)
                if probe.width * probe.height > max_pixels:
                    raise too_many
                probe.verify()  # structure and checksums, without decoding the pixels
                return Declared(announced, probe.width, probe.height)
    except UploadRejected:
        raise
    except (Image.DecompressionBombError, Image.DecompressionBombWarning):
        raise too_many from None
    except Exception:  # Pillow reports truncated or corrupt files with assorted errors
        raise UploadRejected(415, "broken_image", BROKEN_IMAGE) from None


class DecodeSlots:
    """At most ``slots`` photo decodes at once in this process (a semaphore).

    ``acquire`` waits up to ``wait`` seconds for a free slot and returns whether it
    got one; the API answers 503 with ``Retry-After`` when it did not. ``decodes``
    counts the slots handed out and ``peak`` the most held at once.
    """

    def __init__(self, slots: int, wait: float = 1.0) -> None:
        self.slots = slots
        self.wait = wait
        self._free = threading.BoundedSemaphore(slots)
        self._lock = threading.Lock()
        self.decodes = self.held = self.peak = 0

    def acquire(self) -> bool:
        if not self._free.acquire(timeout=self.wait):
            return False
        with self._lock:
            self.decodes += 1
            self.held += 1
            self.peak = max(self.peak, self.held)
        return True

    def release(self) -> None:
        with self._lock:
            self.held -= 1
        self._free.release()


def clean_image(data: bytes, *, max_bytes: int, max_pixels: int) -> CleanImage:
    """The photo checked (``check_header`` first) and re-encoded, or ``UploadRejected``."""
    from PIL import Image, ImageOps  # only needed when a photo arrives

    announced = check_header(data, max_bytes=max_bytes, max_pixels=max_pixels).format
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(data)) as image:
                image.load()
                upright = ImageOps.exif_transpose(image)
    except (Image.DecompressionBombError, Image.DecompressionBombWarning):
        raise UploadRejected(413, "too_many_pixels",
                             TOO_MANY_PIXELS.format(mp=max_pixels // 10**6)) from None
    except Exception:  # Pillow reports truncated or corrupt files with assorted errors
        raise UploadRejected(415, "broken_image", BROKEN_IMAGE) from None
    if upright.mode not in ("RGB", "L") and announced == "JPEG":
        upright = upright.convert("RGB")
    out = io.BytesIO()
    # Saved from the pixels alone: no EXIF, no ICC profile, no text chunks.
    options = {"quality": 95} if announced in ("JPEG", "WEBP") else {}
    upright.save(out, format=announced, **options)
    return CleanImage(out.getvalue(), MEDIA_TYPES[announced], upright.width, upright.height)


class UploadVault:
    """Keeps checked photos encrypted for ``days``; with 0 days, keeps nothing."""

    def __init__(self, directory: Path, days: int, key: str | None) -> None:
        self.directory = directory
        self.days = days
        if days > 0:
            from cryptography.fernet import Fernet

            if not key:
                raise ValueError("SI_UPLOAD_KEY is required when SI_UPLOAD_RETENTION_DAYS > 0")
            self._fernet = Fernet(key.encode())

    @property
    def enabled(self) -> bool:
        return self.days > 0

    def keep(self, owner: str, image: CleanImage) -> Path | None:
        """Store ``image`` encrypted under a name that reveals nothing; None if disabled."""
        if not self.enabled:
            return None
        self.directory.mkdir(parents=True, exist_ok=True)
        self.purge()
        name = hashlib.sha256(f"{owner}:{image.digest}".encode()).hexdigest()[:32]
        path = self.directory / f"{name}.bin"
        path.write_bytes(self._fernet.encrypt(image.data))
        return path

    def purge(self, now: float | None = None) -> int:
        """Delete kept photos older than the retention; how many were deleted."""
        if not self.enabled or not self.directory.is_dir():
            return 0
        cutoff = (now or time.time()) - self.days * 86400
        gone = 0
        for path in self.directory.glob("*.bin"):
            if path.stat().st_mtime < cutoff:
                path.unlink(missing_ok=True)
                gone += 1
        return gone
