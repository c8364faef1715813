"""What an uploaded file is, from its bytes; the refusals every format shares.

The name's extension only says what the uploader meant: a file whose bytes are another
format (a renamed executable, a zip called .pdf) is refused, saying what it really is.
A .docx or .xlsx is a zip: it is opened here with the standard library, its entries
counted and their declared sizes added up before any parser inflates one (a zip bomb
declares a small file and inflates to gigabytes; ``Limits.max_unzipped`` and the ratio
stop it), and its parts checked for the format's own (``word/document.xml``,
``xl/workbook.xml``).
"""

from __future__ import annotations

import io
import zipfile
from dataclasses import dataclass
from pathlib import PurePath

from rag.errors import RagError

# Extensions accepted, by format.
FORMATS: dict[str, tuple[str, ...]] = {
    "pdf": (".pdf",),
    "docx": (".docx",),
    "xlsx": (".xlsx",),
    "html": (".html", ".htm"),
    "markdown": (".md", ".markdown", ".txt"),
}
# Bytes that start a file no document converter reads: (prefix, what it is).
_FOREIGN: tuple[tuple[bytes, str], ...] = (
    (b"MZ", "Windows 可执行程序（.exe/.dll）"),
    (b"\x7fELF", "Linux 可执行程序"),
    (b"\xcf\xfa\xed\xfe", "macOS 可执行程序"),
    (b"\xca\xfe\xba\xbe", "macOS/Java 程序"),
    (b"#!", "脚本程序"),
    (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", "旧版或加密的 Office 文件（.doc/.xls，或设了打开密码的 .docx/.xlsx）"),
    (b"Rar!", "RAR 压缩包"),
    (b"7z\xbc\xaf\x27\x1c", "7z 压缩包"),
    (b"\x1f\x8b", "gzip 压缩包"),
    (b"\x89PNG", "PNG 图片"),
    (b"\xff\xd8\xff", "JPEG 图片"),
    (b"GIF8", "GIF 图片"),
    (b"{\\rtf", "RTF 文档（请另存为 .docx）"),
)


@dataclass(frozen=True)
class Limits:
    """What an upload may be; ``max_bytes`` is also checked by the web layer before reading."""

    max_bytes: int = 50 * 2**20
    max_unzipped: int = 200 * 2**20  # a .docx/.xlsx's entries, inflated, together
    max_ratio: int = 200  # inflated / compressed, per entry larger than 1 MB inflated
    max_entries: int = 10_000
    max_pages: int = 2_000  # PDF pages
    max_cells: int = 1_000_000  # Excel cells read
    max_chars: int = 2_000_000  # converted text
    min_chars: int = 20  # fewer letters and digits than this: no text (a scan)


class FileRefused(RagError, ValueError):
    """A file that is not converted: ``code`` names why, ``message`` says it in Chinese."""

    def __init__(self, code: str, **params: object) -> None:
        from rag.texts import FILE_REFUSED

        self.code = code
        self.params = params
        self.message = FILE_REFUSED[code].format(**params)
        super().__init__(f"{code}: {self.message}")


def sniff(data: bytes, filename: str, limits: Limits) -> str:
    """The format of ``data`` (a key of ``FORMATS``); raises ``FileRefused``."""
    if len(data) > limits.max_bytes:
        raise FileRefused("too_large", size=human_size(limits.max_bytes))
    if not data.strip():
        raise FileRefused("empty")
    suffix = PurePath(filename or "").suffix.lower()
    meant = next((k for k, exts in FORMATS.items() if suffix in exts), None)
    if meant is None:
        raise FileRefused("unsupported_type", suffix=suffix or "（无扩展名）")
    found = _content_type(data, limits)
    if found != meant:
        raise FileRefused("type_mismatch", suffix=suffix, actual=_described(found))
    return found


def _content_type(data: bytes, limits: Limits) -> str:
    head = data[:1024]
    for prefix, what in _FOREIGN:
        if data.startswith(prefix):
            raise FileRefused("foreign_file", actual=what)
    if b"%PDF-" in head:  # the header may follow a few bytes of junk
        return "pdf"
    if data.startswith(b"PK"):
        return _zip_type(data, limits)
    if b"\0" in data[:8192]:
        raise FileRefused("binary_file")
    lowered = head.lower()
    if any(tag in lowered for tag in (b"<!doctype html", b"<html", b"<body", b"<head")):
        return "html"
    return "markdown"


def _zip_type(data: bytes, limits: Limits) -> str:
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        entries = archive.infolist()
    # NotImplementedError: a zip version or compression method zipfile cannot read.
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, OSError, NotImplementedError):
        raise FileRefused("broken_zip") from None
    if len(entries) > limits.max_entries:
        raise FileRefused("zip_bomb")
    total = 0
    for entry in entries:
        total += entry.file_size
        big = entry.file_size > 2**20
        if big and entry.file_size > limits.max_ratio * max(entry.compress_size, 1):
            raise FileRefused("zip_bomb")
    if total > limits.max_unzipped:
        raise FileRefused("zip_bomb")
    names = {e.filename for e in entries}
    if "[Content_Types].xml" in names:
        if "word/document.xml" in names:
            return "docx"
        if "xl/workbook.xml" in names:
            return "xlsx"
    return "zip"


def human_size(size: int) -> str:
    """A size as staff read it: "50 MB", "97.7 KB"."""
    if size >= 2**20:
        mb = size / 2**20
        return f"{mb:.0f} MB" if mb.is_integer() else f"{mb:.1f} MB"
    return f"{size / 1024:.1f} KB"


def _described(kind: str) -> str:
    return {"pdf": "PDF 文件", "docx": "Word 文档（.docx）", "xlsx": "Excel 表格（.xlsx）",
            "html": "网页（HTML）", "markdown": "纯文本", "zip": "普通压缩包"}[kind]
