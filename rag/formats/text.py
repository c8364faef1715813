"""Markdown and plain text: decoded (UTF-8, else GB18030 as Chinese Windows saves it),
a YAML front matter dropped (the upload form gives the metadata), line ends unified.

Markdown headings are kept as written; in a plain text file, 公文-numbered lines
become headings (``structure``).
"""

from __future__ import annotations

import re

from rag.formats import Converted
from rag.formats.sniff import FileRefused, Limits
from rag.formats.structure import heading_level, markdown, table_lines

_FRONT = re.compile(r"\A---[ \t]*\n.*?\n---[ \t]*\n", re.S)
_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*$")


def decode(data: bytes) -> str:
    """The text of ``data``; ``FileRefused`` when it is neither UTF-8 nor GB18030."""
    for encoding in ("utf-8-sig", "gb18030"):
        try:
            return data.decode(encoding)
        except UnicodeDecodeError:
            continue
    raise FileRefused("unknown_encoding")


def convert_text(data: bytes, limits: Limits) -> Converted:
    text = _FRONT.sub("", decode(data).replace("\r\n", "\n").replace("\r", "\n"), count=1)
    if any(ord(ch) < 32 and ch not in "\n\t\f" for ch in text[:65536]):
        raise FileRefused("binary_file")
    text = re.sub(r"(?m)^(#{1,6}[ \t].*)$", r"\n\1\n", text)  # a heading is a block of its own
    title = ""
    blocks: list[tuple[str, object]] = []
    for block in re.split(r"\n\s*\n", text):
        lines = [line.rstrip() for line in block.strip("\n").splitlines() if line.strip()]
        if not lines:
            continue
        heading = _HEADING.match(lines[0].strip())
        if heading:
            blocks.append((f"h{len(heading.group(1))}", heading.group(2)))
            title = title or (heading.group(2) if len(heading.group(1)) == 1 else "")
            lines = lines[1:]
        if not lines:
            continue
        if all(line.strip().startswith("|") for line in lines) and len(lines) > 1:
            rows = [[c.strip() for c in line.strip().strip("|").split("|")] for line in lines]
            rows = [r for r in rows if not all(re.fullmatch(r":?-{2,}:?", c) for c in r if c)]
            blocks.append(("table", table_lines(rows)))
            continue
        if any(line.lstrip().startswith(("- ", "* ", "+ ")) or re.match(r"^\s*\d+[.)、]", line)
               for line in lines):
            blocks.append(("table", [line.strip() for line in lines]))  # kept line by line
        else:
            run: list[str] = []
            for line in [*lines, ""]:
                if line and heading_level(line) is None:
                    run.append(line.strip())
                    continue
                if run:
                    blocks.append(("p", ("" if _chinese(run) else " ").join(run)))
                    run = []
                if line:
                    blocks.append(("p", line.strip()))  # a 公文 heading: markdown() marks it
    return Converted("markdown", markdown(blocks), title=title)


def _chinese(lines: list[str]) -> bool:
    return sum(1 for ch in "".join(lines) if "\u4e00" <= ch <= "\u9fff") > len("".join(lines)) / 3
