"""A 常见问题 spreadsheet (.xlsx or .csv) read into drafts of curated answers.

The first row is the header: 问题, 答案, 来源 and 日期, with common variants
(``COLUMNS``: 常见问题/标准问题, 回答/答复/解答, 出处/政策依据, 更新日期/发布日期…),
and optionally 相似问法 (several separated by ；, ; or |, or one a line) and 业务 (the
businesses it concerns, by id or name). Every bad row is reported by its number as the
spreadsheet shows it ("第3行：“答案”为空"); a file with any bad row imports nothing.

What is refused before reading: more than ``MAX_BYTES``, a file that is neither an
.xlsx workbook (a zip whose parts unpack to at most ``MAX_UNPACKED``) nor text (a CSV
in UTF-8 or GB18030, as Excel saves it in China), an encrypted or old .xls workbook, and
more than ``MAX_ROWS`` rows. ``SheetError`` carries the Chinese reasons.
"""

from __future__ import annotations

import csv
import io
import logging
import re
import zipfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from pydantic import ValidationError

from si_agent.curated import texts
from si_agent.curated.model import (
    MAX_ANSWER,
    MAX_PARAPHRASES,
    MAX_QUESTION,
    MAX_SOURCE,
    Draft,
    parse_as_of,
)

log = logging.getLogger(__name__)


MAX_BYTES = 5 * 1024 * 1024
MAX_UNPACKED = 50 * 1024 * 1024
MAX_ROWS = 5000
SHOWN_ERRORS = 20
EXTENSIONS = (".xlsx", ".csv", ".txt")

# Column → the header words it is known by (compared without spaces and case).
COLUMNS: dict[str, tuple[str, ...]] = {
    "question": ("问题", "常见问题", "标准问题", "问", "提问", "问题描述", "咨询问题", "question", "q"),
    "answer": ("答案", "回答", "答复", "解答", "答", "标准答案", "回复", "answer", "a"),
    "source": ("来源", "出处", "依据", "政策依据", "文件来源", "来源文件", "source"),
    "as_of": ("日期", "更新日期", "发布日期", "时间", "更新时间", "截至日期", "生效日期", "date", "as_of"),
    "paraphrases": ("相似问法", "相似问题", "相似问", "同义问法", "其他问法", "扩展问法", "类似问法",
                    "paraphrases"),
    "businesses": ("业务", "相关业务", "所属业务", "业务编号", "businesses"),
}
REQUIRED = ("question", "answer", "source", "as_of")
NAMES = {"question": "问题", "answer": "答案", "source": "来源", "as_of": "日期",
         "paraphrases": "相似问法", "businesses": "业务"}
_SPLIT = re.compile(r"[；;|｜\n]+")
_SPLIT_BUSINESSES = re.compile(r"[；;|｜,，、\s]+")


class SheetError(ValueError):
    """Why a spreadsheet imports nothing: one reason for the file, or one a bad row."""

    def __init__(self, reasons: list[str]) -> None:
        super().__init__("; ".join(reasons))
        self.reasons = reasons


@dataclass(frozen=True)
class Row:
    number: int  # as the spreadsheet shows it (the header is row 1)
    draft: Draft


def read_sheet(data: bytes, filename: str,
               businesses: Mapping[str, str] | None = None) -> list[Row]:
    """The drafts of a spreadsheet's rows; ``SheetError`` with every reason otherwise.

    ``businesses`` maps what the 业务 column may say (ids and names) to business ids.
    """
    if len(data) > MAX_BYTES:
        raise SheetError([texts.TOO_LARGE.format(limit=MAX_BYTES // (1024 * 1024))])
    if not filename.lower().endswith(EXTENSIONS):
        raise SheetError([texts.NOT_A_SHEET.format(detail="文件类型不受支持")])
    rows = _xlsx_rows(data) if data[:4] == b"PK\x03\x04" else _csv_rows(data)
    try:
        return _read_rows(rows, businesses or {})
    except csv.Error as exc:
        raise SheetError([texts.NOT_A_SHEET.format(detail=f"CSV 格式有误：{exc}")]) from None


def _read_rows(rows: Iterator[list[object]], businesses: Mapping[str, str]) -> list[Row]:
    header = next(rows, None)
    columns = _columns(header or [])
    missing = [NAMES[c] for c in REQUIRED if c not in columns]
    if header is None or "question" not in columns or "answer" not in columns:
        raise SheetError([texts.NO_HEADER])
    if missing:
        raise SheetError([texts.NO_HEADER + f"（缺少：{'、'.join(missing)}）"])
    out: list[Row] = []
    errors: list[str] = []
    for number, cells in enumerate(rows, start=2):
        if number > MAX_ROWS + 1:
            raise SheetError([texts.TOO_MANY_ROWS.format(limit=MAX_ROWS)])
        values = {c: (cells[i] if i < len(cells) else None) for c, i in columns.items()}
        if all(_blank(v) for v in values.values()):
            continue  # an empty line between groups of questions
        try:
            out.append(Row(number, _draft(values, businesses)))
        except _RowError as exc:
            errors.append(texts.ROW.format(row=number, reason=exc.reason))
    if errors:
        raise SheetError(_shown(errors))
    if not out:
        raise SheetError([texts.EMPTY_SHEET])
    return out


def _shown(errors: list[str]) -> list[str]:
    if len(errors) <= SHOWN_ERRORS:
        return errors
    return [*errors[:SHOWN_ERRORS], texts.MORE_ERRORS.format(count=len(errors) - SHOWN_ERRORS)]


class _RowError(Exception):
    def __init__(self, reason: str) -> None:
        self.reason = reason


def _draft(values: Mapping[str, object], businesses: Mapping[str, str]) -> Draft:
    text = {c: _text(v) for c, v in values.items() if c != "as_of"}
    for column in ("question", "answer", "source"):
        if not text.get(column):
            raise _RowError(texts.MISSING.format(column=NAMES[column]))
    if _blank(values.get("as_of")):
        raise _RowError(texts.MISSING.format(column="日期"))
    limits = {"question": MAX_QUESTION, "answer": MAX_ANSWER, "source": MAX_SOURCE}
    for column, limit in limits.items():
        if len(text[column]) > limit:
            raise _RowError(texts.TOO_LONG.format(column=NAMES[column], limit=limit))
    paraphrases = [p.strip() for p in _SPLIT.split(text.get("paraphrases") or "") if p.strip()]
    if len(paraphrases) > MAX_PARAPHRASES:
        raise _RowError(texts.TOO_MANY_PARAPHRASES.format(limit=MAX_PARAPHRASES))
    if any(len(p) > MAX_QUESTION for p in paraphrases):
        raise _RowError(texts.TOO_LONG.format(column="相似问法", limit=MAX_QUESTION))
    ids = []
    for named in _SPLIT_BUSINESSES.split(text.get("businesses") or ""):
        if named:
            if named not in businesses:
                raise _RowError(texts.UNKNOWN_BUSINESS.format(business=named))
            ids.append(businesses[named])
    as_of = values.get("as_of")
    try:
        return Draft(question=text["question"], answer=text["answer"], source=text["source"],
                     as_of=parse_as_of(as_of),
                     paraphrases=paraphrases, businesses=list(dict.fromkeys(ids)))
    except ValueError as exc:  # parse_as_of's, or a ValidationError
        if not isinstance(exc, ValidationError) or any(e["loc"] == ("as_of",) for e in exc.errors()):
            raise _RowError(texts.BAD_DATE.format(value=_text(as_of)[:40])) from None
        raise _RowError(str(exc.errors()[0]["msg"])) from None


def _columns(header: list[object]) -> dict[str, int]:
    """Which column of the header holds what (the first of each kind)."""
    known = {w.lower(): c for c, words in COLUMNS.items() for w in words}
    found: dict[str, int] = {}
    for i, cell in enumerate(header):
        word = re.sub(r"[\s*＊:：()（）]+", "", _text(cell)).lower()
        column = known.get(word)
        if column and column not in found:
            found[column] = i
    return found


def _text(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return str(value).replace("\r\n", "\n").strip()


def _blank(value: object) -> bool:
    return value is None or (isinstance(value, str) and not value.strip())


def _xlsx_rows(data: bytes) -> Iterator[list[object]]:
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as z:
            unpacked = sum(i.file_size for i in z.infolist())
            if "xl/workbook.xml" not in z.namelist():
                raise SheetError([texts.NOT_A_SHEET.format(detail="不是 Excel 工作簿")])
    except (zipfile.BadZipFile, NotImplementedError):  # broken, or a zip version it cannot read
        raise SheetError([texts.NOT_A_SHEET.format(detail="文件已损坏")]) from None
    if unpacked > MAX_UNPACKED:
        raise SheetError([texts.TOO_LARGE.format(limit=MAX_BYTES // (1024 * 1024))])
    from openpyxl import load_workbook

    try:
        book = load_workbook(io.BytesIO(data), read_only=True, data_only=True)
    except Exception as exc:  # openpyxl raises many kinds for a broken workbook
        log.info("unreadable workbook: %s: %s", type(exc).__name__, exc)
        raise SheetError([texts.NOT_A_SHEET.format(detail="文件已损坏或不是有效的 Excel 工作簿")]) \
            from None
    try:
        sheet = book.worksheets[0]
        for row in sheet.iter_rows(values_only=True):
            yield list(row)
    finally:
        book.close()


def _csv_rows(data: bytes) -> Iterator[list[object]]:
    if data[:8] == b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1":
        raise SheetError([texts.NOT_A_SHEET.format(
            detail="旧版 .xls 或已加密的工作簿，请另存为 .xlsx 并取消密码")])
    if b"\0" in data:
        raise SheetError([texts.NOT_A_SHEET.format(detail="不是表格文件")])
    for encoding in ("utf-8-sig", "gb18030"):
        try:
            text = data.decode(encoding)
            break
        except UnicodeDecodeError:
            continue
    else:
        raise SheetError([texts.NOT_A_SHEET.format(detail="无法识别文字编码")])
    first = text.split("\n", 1)[0]
    dialect = csv.excel_tab if "\t" in first and "," not in first else csv.excel
    yield from csv.reader(io.StringIO(text), dialect)


def edit_reason(exc: ValueError) -> str | None:
    """Why a book refused a draft, in Chinese (None for a reason of the form's own)."""
    from si_agent.curated.book import DuplicateQuestion, UnknownBusiness

    if isinstance(exc, DuplicateQuestion):
        return texts.DUPLICATE.format(
            question=exc.question, other=texts.DUPLICATE_ANSWER.format(question=exc.other.question))
    if isinstance(exc, UnknownBusiness):
        return texts.UNKNOWN_BUSINESS.format(business=exc.business)
    return None


def import_errors(errors: list[tuple[int, ValueError]], rows: list[Row],
                  existing: set[str]) -> list[str]:
    """``Imported.errors`` as "第N行：…" reasons; ``existing``: the ids stored before the
    import (a duplicate of anything else is a duplicate of another row of the file)."""
    from si_agent.curated.book import DuplicateQuestion

    out = []
    for at, exc in errors:
        reason = edit_reason(exc) or str(exc)
        if isinstance(exc, DuplicateQuestion) and exc.other.id not in existing:
            other = next((r.number for r in rows if exc.other.question == r.draft.question), None)
            if other is not None:
                reason = texts.DUPLICATE.format(question=exc.question,
                                                other=texts.DUPLICATE_ROW.format(row=other))
        out.append(texts.ROW.format(row=rows[at].number, reason=reason))
    return _shown(out)
