"""What every format's converter shares: headings, tables as rows, clean lines.

Chinese official documents (公文) number their headings rather than style them:
"一、" (level 2), "（一）" (level 3), "第一章" (level 2) and "第一条" (level 3, an
article, each its own section). A short line starting so becomes a Markdown heading
(``heading_level``), so the chunker cuts there whatever the format said.

A table becomes one line per row, each cell after its column's header
("- 项目：失业保险金；标准：当地最低工资标准的90%"): a row cut from its table by the
chunker still says what its numbers are. A table without a header row (or with one
column) is written as its cells joined by "；".
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence

_NUMERALS = "一二三四五六七八九十百零〇两"
_LEVELS: tuple[tuple[re.Pattern[str], int], ...] = (
    (re.compile(rf"^第[{_NUMERALS}\d]+[章编]\s*\S"), 2),
    (re.compile(rf"^第[{_NUMERALS}\d]+节\s*\S"), 3),
    (re.compile(rf"^[{_NUMERALS}]+、\s*\S"), 2),
    (re.compile(rf"^[（(][{_NUMERALS}]+[）)]\s*\S"), 3),
    (re.compile(rf"^第[{_NUMERALS}\d]+条\s*\S"), 3),
)
HEADING_MAX = 40  # a longer line is a paragraph that happens to start with a number
_SPACES = re.compile(r"[ \t\u3000\xa0]+")


def heading_level(line: str) -> int | None:
    """The Markdown level of a 公文-numbered heading line, or None."""
    line = line.strip()
    if not line or len(line) > HEADING_MAX:
        return None
    for pattern, level in _LEVELS:
        if pattern.match(line):
            return level
    return None


def article_split(line: str) -> tuple[str, str] | None:
    """ "第三条 参保人员……" → ("第三条", "参保人员……"): an article is a heading (its
    number) and its text, however short (a heading alone would not be indexed)."""
    m = re.match(rf"^(第[{_NUMERALS}\d]+条)\s*(.+)$", line.strip())
    return (m.group(1), m.group(2).strip()) if m else None


# CJK Radicals Supplement forms PDF fonts map simplified characters to (a font's
# ToUnicode table pointing at the radical, not the character: "⻓" for 长). The Kangxi
# Radicals block (U+2F00-U+2FD5: "⾦" for 金) is folded by NFKC, this block is not.
_SUPPLEMENT = {
    "\u2e9f": "母",  # ⺟
    "\u2ea0": "民",  # ⺠
    "\u2ec4": "西",  # ⻄
    "\u2ec5": "见",  # ⻅
    "\u2ec6": "角",  # ⻆
    "\u2ec9": "贝",  # ⻉
    "\u2ecb": "车",  # ⻋
    "\u2ed0": "钅",  # ⻐
    "\u2ed3": "长",  # ⻓
    "\u2ed4": "门",  # ⻔
    "\u2ed8": "青",  # ⻘
    "\u2ed9": "韦",  # ⻙
    "\u2eda": "页",  # ⻚
    "\u2edb": "风",  # ⻛
    "\u2edc": "飞",  # ⻜
    "\u2edd": "食",  # ⻝
    "\u2ee0": "饣",  # ⻠
    "\u2ee1": "首",  # ⻡
    "\u2ee2": "马",  # ⻢
    "\u2ee5": "鱼",  # ⻥
    "\u2ee6": "鸟",  # ⻦
    "\u2ee7": "卤",  # ⻧
    "\u2ee8": "麦",  # ⻨
    "\u2ee9": "黄",  # ⻩
    "\u2eea": "黾",  # ⻪
    "\u2eec": "齐",  # ⻬
    "\u2eee": "齿",  # ⻮
    "\u2ef0": "龙",  # ⻰
    "\u2ef3": "龟",  # ⻳
}
_RADICALS = re.compile("[\u2e80-\u2eff\u2f00-\u2fdf]")


def _unradical(match: re.Match[str]) -> str:
    ch = match.group(0)
    if ch >= "\u2f00":
        return unicodedata.normalize("NFKC", ch)
    return _SUPPLEMENT.get(ch, ch)


def clean_line(text: str) -> str:
    """One line: radical code points as the characters they stand for, runs of spaces
    (full-width too) to one, none between Chinese characters."""
    text = _RADICALS.sub(_unradical, text)
    text = _SPACES.sub(" ", text.replace("\r", "")).strip()
    return re.sub(r"(?<=[\u3000-\u9fff\uff00-\uffef]) (?=[\u3000-\u9fff\uff00-\uffef])", "", text)


def table_lines(rows: Sequence[Sequence[object]]) -> list[str]:
    """A table (first row the header) as Markdown list lines, one per row."""
    cells = [[clean_line(str(c)) if c is not None else "" for c in row] for row in rows]
    cells = [row for row in cells if any(row)]
    if not cells:
        return []
    caption: list[str] = []
    while len(cells) > 2 and len({c for c in cells[0] if c}) == 1:
        # A title row (merged across the table) above the header row.
        caption.append(next(c for c in cells.pop(0) if c))
    header = cells[0]
    body = cells[1:]
    # A header is a row of short, distinct labels above at least one more row.
    labelled = (body and len(header) > 1 and all(header)
                and len(set(header)) == len(header) and max(map(len, header)) <= 30)
    if not labelled:
        return caption + [f"- {'；'.join(c for c in row if c)}" for row in cells]
    lines = list(caption)
    for row in body:
        pairs = [f"{h}：{v}" for h, v in zip(header, row, strict=False) if v]
        if pairs:
            lines.append(f"- {'；'.join(pairs)}")
    return lines


def markdown(blocks: Iterable[tuple[str, str | list[str]]]) -> str:
    """Blocks to Markdown: ``("h2", text)`` headings, ``("p", text)`` paragraphs,
    ``("table", lines)`` (lines as they are); numbered 公文 headings in paragraphs become headings."""
    out: list[str] = []
    for kind, value in blocks:
        if kind == "table":
            if value:
                out.append("\n".join(value))
            continue
        text = clean_line(value if isinstance(value, str) else " ".join(value))
        if not text:
            continue
        if kind.startswith("h") and kind[1:].isdigit():
            out.append(f"{'#' * min(int(kind[1:]), 6)} {text}")
            continue
        level = heading_level(text)
        article = article_split(text)
        if article:
            out.append(f"### {article[0]}")
            out.append(article[1])
        elif level:
            out.append(f"{'#' * level} {text}")
        else:
            out.append(text)
    return "\n\n".join(out).strip() + "\n"
