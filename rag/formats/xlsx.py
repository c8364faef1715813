"""Excel .xlsx → Markdown with openpyxl (read-only, values not formulas).

Each visible sheet is a section ("## 工作表名"); its rows are a table whose first row
that has two or more cells is the header (``structure.table_lines``). A title row
above it (one cell: "2025年失业保险金发放标准") is kept as the sheet's first line (the
first sheet's is the file's title).
Formulas give their cached values (what Excel last showed). At most ``Limits.max_cells``
cells are read.
"""

from __future__ import annotations

import datetime
import io
import logging
import zipfile
import zlib

from rag.formats import Converted
from rag.formats.sniff import FileRefused, Limits
from rag.formats.structure import clean_line, markdown, table_lines

log = logging.getLogger(__name__)


def convert_xlsx(data: bytes, limits: Limits) -> Converted:
    import openpyxl
    from openpyxl.utils.exceptions import InvalidFileException

    blocks: list[tuple[str, object]] = []
    cells = 0
    title = ""  # the first sheet's title row
    try:
        book = openpyxl.load_workbook(io.BytesIO(data), read_only=True, data_only=True)
        try:
            sheets = [s for s in book.worksheets if getattr(s, "sheet_state", "visible") == "visible"]
            for sheet in sheets:
                rows: list[list[str]] = []
                for row in sheet.iter_rows(values_only=True):
                    cells += len(row)
                    if cells > limits.max_cells:
                        raise FileRefused("too_many_cells", cells=limits.max_cells)
                    values = [_text(v) for v in row]
                    while values and not values[-1]:
                        values.pop()
                    if any(values):
                        rows.append(values)
                if not rows:
                    continue
                blocks.append(("h2", sheet.title))
                while rows and sum(1 for v in rows[0] if v) == 1 and len(rows) > 1:
                    caption = next(v for v in rows.pop(0) if v)
                    title = title or caption
                    blocks.append(("p", caption))
                blocks.append(("table", table_lines(rows)))
        finally:
            book.close()
    except FileRefused:
        raise
    except (zipfile.BadZipFile, zlib.error, InvalidFileException, KeyError, ValueError, TypeError,
            OSError, EOFError, IndexError, NotImplementedError) as exc:
        log.info("unreadable xlsx: %s: %s", type(exc).__name__, exc)
        raise FileRefused("broken_xlsx") from None
    return Converted("xlsx", markdown(blocks), pages=max(1, len(sheets)), title=title)


def _text(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, datetime.datetime):
        return value.date().isoformat() if value.time() == datetime.time() else value.isoformat(" ")
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return clean_line(str(value))
